#include "modeltool/info_command.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "core/cli/command_line.h"
#include "model_io/model_file.h"
#include "model_io/weights_fit.h"
#include "modeltool/layer_table.h"

namespace mt {
namespace {

std::string Join(const std::vector<std::string>& parts) {
  std::string s;
  for (const std::string& p : parts) s += (s.empty() ? "" : ",") + p;
  return s;
}

// 1234567 -> "1.23M", for the table's totals.
std::string Human(int64_t n) {
  char text[32];
  if (n >= 1000000000)
    std::snprintf(text, sizeof text, "%.2fG", n / 1e9);
  else if (n >= 1000000)
    std::snprintf(text, sizeof text, "%.2fM", n / 1e6);
  else if (n >= 1000)
    std::snprintf(text, sizeof text, "%.1fK", n / 1e3);
  else
    std::snprintf(text, sizeof text, "%lld", static_cast<long long>(n));
  return text;
}

}  // namespace

CLI::App* AddInfoCommand(CLI::App& app, InfoOptions& options) {
  CLI::App* cmd = app.add_subcommand("info", "show a model's layers, shapes, parameters and FLOPs");
  cli::Configure(*cmd, "mtmodel info FILE [--json]");
  cmd->description(
      "Shows per layer its type, inputs, output shape per sample, parameters, FLOPs per sample "
      "(2 per multiply-add; pools and add count their sums, batch norm 2 per value, comparisons "
      "nothing) and activation floats per sample, then the totals. FILE: a .onnx model, a .mtc "
      "checkpoint, a text spec or a preset name.");
  cmd->add_option("FILE", options.file, "the model")->required();
  cmd->add_flag("--json", options.json, "print JSON instead of a table");
  cmd->set_help_flag("-h,--help", "this text");
  return cmd;
}

int RunInfo(const InfoOptions& options) {
  const LoadedModel loaded = LoadModelFile(options.file);
  const BuiltModel built = BuildOnCpu(loaded.spec);
  const std::vector<LayerRow> rows = DescribeLayers(loaded.spec, *built.model);
  int64_t params = 0, stats = 0, flops = 0, activations = 0;
  for (const LayerRow& r : rows) {
    params += r.params;
    stats += r.running_stats;
    flops += r.flops;
    activations += r.activations;
  }
  const Shape& in = built.model->input_shape();
  if (options.json) {
    nlohmann::json j;
    j["model"] = loaded.spec.name();
    j["origin"] = loaded.origin;
    j["has_weights"] = loaded.weights.has_value();
    j["input"] = {in[0], in[1], in[2]};
    j["classes"] = built.model->num_classes();
    j["warnings"] = loaded.warnings;
    j["layers"] = nlohmann::json::array();
    for (const LayerRow& r : rows)
      j["layers"].push_back({{"name", r.name},
                             {"type", r.type},
                             {"inputs", r.inputs},
                             {"output_shape", r.output_shape},
                             {"params", r.params},
                             {"running_stats", r.running_stats},
                             {"flops", r.flops},
                             {"activations", r.activations}});
    j["totals"] = {{"params", params},
                   {"running_stats", stats},
                   {"flops", flops},
                   {"activations", activations},
                   {"layers", rows.size()}};
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::printf("model %s (%s): input %s, %d classes, %s\n", loaded.spec.name().c_str(),
              loaded.origin.c_str(), in.ToString().c_str(), built.model->num_classes(),
              loaded.weights ? "with weights" : "spec only (no weights)");
  for (const std::string& warning : loaded.warnings) std::printf("warning: %s\n", warning.c_str());
  // Columns as wide as their widest entry: imported names can be long.
  size_t name_w = 5, type_w = 4, inputs_w = 6, shape_w = 6;
  for (const LayerRow& r : rows) {
    name_w = std::max(name_w, r.name.size());
    type_w = std::max(type_w, r.type.size());
    inputs_w = std::max(inputs_w, Join(r.inputs).size());
    shape_w = std::max(shape_w, r.output_shape.size());
  }
  auto line = [&](const std::string& name, const std::string& type, const std::string& inputs,
                  const std::string& shape, const std::string& p, const std::string& f,
                  const std::string& a) {
    std::printf("%-*s  %-*s  %-*s  %-*s  %12s  %14s  %12s\n", static_cast<int>(name_w),
                name.c_str(), static_cast<int>(type_w), type.c_str(), static_cast<int>(inputs_w),
                inputs.c_str(), static_cast<int>(shape_w), shape.c_str(), p.c_str(), f.c_str(),
                a.c_str());
  };
  line("layer", "type", "inputs", "output", "params", "FLOPs/sample", "activations");
  for (const LayerRow& r : rows)
    line(r.name, r.type, Join(r.inputs), r.output_shape, std::to_string(r.params),
         std::to_string(r.flops), std::to_string(r.activations));
  line("total", "", "", "", std::to_string(params), std::to_string(flops),
       std::to_string(activations));
  std::printf(
      "%zu layers, %s parameters (%s bytes), %lld running statistics, %s FLOPs and %s "
      "activation floats per sample\n",
      rows.size(), Human(params).c_str(), Human(params * 4).c_str(), static_cast<long long>(stats),
      Human(flops).c_str(), Human(activations).c_str());
  return 0;
}

}  // namespace mt
