#include "modeltool/convert_command.h"

#include <CLI/CLI.hpp>

#include <cstdio>

#include "core/cli/command_line.h"
#include "core/cli/common_options.h"
#include "model_io/model_file.h"
#include "model_io/run_model.h"
#include "model_io/weights_fit.h"

namespace mt {
namespace {

ModelWeights FreshWeights(const proto::ModelSpec& spec, uint64_t seed) {
  const BuiltModel built = BuildOnCpu(spec);
  built.model->InitParams(seed);
  return WeightsOf(*built.model);
}

}  // namespace

CLI::App* AddConvertCommand(CLI::App& app, ConvertOptions& options) {
  CLI::App* cmd =
      app.add_subcommand("convert", "convert a model between ONNX, checkpoint and text spec");
  cli::Configure(*cmd, "mtmodel convert IN OUT [--seed N]");
  cmd->description(
      "Converts by extension: .onnx (ONNX, opset 13 when written), .mtc (an mt checkpoint at step "
      "0), .txt/.pbtxt/.spec (a text spec: the weights are not kept). IN may also be a preset "
      "name; a source without weights gets freshly initialised ones (--seed).");
  cmd->add_option("IN", options.in, "the model to read")->required();
  cmd->add_option("OUT", options.out, "the file to write")->required();
  cli::AddSeed(*cmd, options.seed, "the weights made for a source without any");
  cmd->set_help_flag("-h,--help", "this text");
  cmd->callback([&options] {
    // A text spec only by extension, so that a typo such as "model.onxx"
    // is a usage error rather than a text file the user did not mean.
    if (!HasModelFileExtension(options.out))
      throw cli::UsageError("OUT " + options.out +
                            ": unknown extension (use .onnx, .mtc, .txt, .pbtxt or .spec)");
  });
  return cmd;
}

int RunConvert(const ConvertOptions& options) {
  LoadedModel loaded = LoadModelFile(options.in);
  const bool target_is_spec = ModelFileKindOf(options.out) == ModelFileKind::kTextSpec;
  if (!loaded.weights) {
    if (!target_is_spec)
      std::fprintf(
          stderr, "mtmodel: %s has no weights: %s gets freshly initialised ones (seed %llu)\n",
          options.in.c_str(), options.out.c_str(), static_cast<unsigned long long>(options.seed));
    loaded.weights = FreshWeights(loaded.spec, options.seed);
  }
  const SavedModel saved = SaveModelFile(options.out, loaded.spec, *loaded.weights);
  if (saved.weights_dropped && !loaded.origin.empty() &&
      ModelFileKindOf(options.in) != ModelFileKind::kTextSpec)
    std::fprintf(stderr, "mtmodel: %s is a text spec: the weights of %s are not kept\n",
                 options.out.c_str(), options.in.c_str());
  std::fprintf(stderr, "mtmodel: wrote %s (model %s, %zu parameters)\n", options.out.c_str(),
               loaded.spec.name().c_str(), loaded.weights->params.size());
  return 0;
}

}  // namespace mt
