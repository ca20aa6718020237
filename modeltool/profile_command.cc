#include "modeltool/profile_command.h"

#include <sys/wait.h>
#include <unistd.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>

#include "core/cli/choice_option.h"
#include "core/cli/command_line.h"
#include "core/cli/common_options.h"
#include "core/cli/validators.h"
#include "core/model/model_spec.h"
#include "core/optim/optimizer.h"
#include "core/profile/memory_breakdown.h"
#include "core/util/atomic_file.h"
#include "core/util/malloc_tuning.h"
#include "core/util/process_stats.h"
#include "core/util/rng.h"
#include "core/util/seconds.h"
#include "kernels/cpu/cpu_backend.h"
#include "model_io/model_file.h"
#include "modeltool/activation_report.h"
#if MT_HAVE_OPENCL
#include "kernels/opencl/opencl_backend.h"
#include "kernels/opencl/opencl_device.h"
#endif

namespace mt {
namespace {

using nlohmann::json;

// Runs argv (argv[0] a path) and returns its stdout; its stderr passes
// through. Throws when it cannot start or does not exit 0.
std::string RunChild(const std::vector<std::string>& args) {
  int out[2];
  if (pipe(out) != 0) throw std::runtime_error("cannot create a pipe for the child");
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("cannot start a child process");
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  std::string text;
  char buf[4096];
  for (ssize_t got; (got = read(out[0], buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<size_t>(got));
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("measuring " + args[3] + " " + args[4] + " failed (exit status " +
                             std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
  return text;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

ProfileCommands AddProfileCommands(CLI::App& app, ProfileOptions& options) {
  CLI::App* cmd = app.add_subcommand("profile", "time and memory of training steps per batch size");
  cli::Configure(*cmd,
                 "mtmodel profile FILE [--batches 16,32,64,128] [--device cpu|opencl] "
                 "[--threads N] [--steps N] [--recompute] [--activation-precision fp32|bf16|fp16] "
                 "[--json FILE]");
  cmd->description(
      "Trains FILE on synthetic data (random inputs of the model's shape, the daemons' default "
      "optimizer: Adam) for "
      "a few steps at each batch size, each in a fresh process, and prints per batch the median "
      "step time, samples per second, the memory predicted (the process's resident set before "
      "the model was built plus the model's, optimizer's and batch's buffers: the estimate the "
      "batch caps use) and the peak resident set measured (VmHWM), with the prediction's error; "
      "then what the activation plan keeps of each layer's output, and the KiB per sample of "
      "every activation precision and recomputation setting.");
  cmd->add_option("FILE", options.file, "the model: .onnx, .mtc, a text spec or a preset name")
      ->required();
  cmd->add_option("--batches", options.batches, "batch sizes, comma-separated")
      ->delimiter(',')
      ->type_name("B,B")
      ->transform(cli::Integer(1, 65536))
      ->default_str("16,32,64,128");
  cmd->add_option("--device", options.device, "where the layers run: cpu or opencl")
      ->check(CLI::IsMember({"cpu", "opencl"}));
  cli::AddThreads(*cmd, options.threads, "CPU threads for the compute kernels");
  cmd->add_option("--steps", options.steps, "timed steps per batch size (after one untimed)")
      ->transform(cli::Integer(1, 10000));
  cmd->add_option("--json", options.json_path, "also write the figures here as JSON")
      ->type_name("FILE");
  cmd->add_flag("--recompute", options.recompute,
                "replay cheap layers (batch norm, activations, adds, narrow 1x1 convs) in the "
                "backward pass instead of keeping their outputs: less memory, more time");
  cli::AddChoice(*cmd, "--activation-precision", options.activation_precision,
                 ActivationPrecisionWords(),
                 "how the activations kept for the backward pass are stored (16 bits: half the "
                 "memory, widened when read)");
  cmd->set_help_flag("-h,--help", "this text");

  // The child of each batch size; not for users, so not in --help.
  CLI::App* measure = app.add_subcommand("measure-batch", "");
  measure->group("");
  measure->add_option("FILE", options.file)->required();
  measure->add_option("--batch", options.batch)->required()->check(CLI::Range(1, 65536));
  measure->add_option("--device", options.device);
  measure->add_option("--threads", options.threads);
  measure->add_option("--steps", options.steps);
  measure->add_flag("--recompute", options.recompute);
  cli::AddChoice(*measure, "--activation-precision", options.activation_precision,
                 ActivationPrecisionWords(), "");
  return {cmd, measure};
}

int RunMeasureBatch(const ProfileOptions& options) {
  KeepFreedMemoryForReuse();  // as mtworker does: the memory it measures is the worker's
  const LoadedModel loaded = LoadModelFile(options.file);
  kernels::CpuBackend cpu(static_cast<int>(options.threads));
  std::unique_ptr<kernels::Backend> opencl;
  if (options.device == "opencl") {
#if MT_HAVE_OPENCL
    opencl = std::make_unique<kernels::OpenClBackend>(kernels::DefaultOpenClDevice());
#else
    throw std::runtime_error("--device opencl: this mtmodel was built without OpenCL");
#endif
  }
  const int batch = options.batch;
  // Everything the run needs besides the model: binary, libraries, drivers.
  const int64_t baseline = ReadResidentMemory().current_bytes;
  std::vector<kernels::Backend*> placement;
  if (opencl) placement.assign(static_cast<size_t>(loaded.spec.layer_size()), opencl.get());
  const std::unique_ptr<Model> model = BuildModel(loaded.spec, cpu, placement);
  model->SetActivationPrecision(options.activation_precision);
  model->SetRecompute(options.recompute);
  model->Reserve(batch);
  model->InitParams(1);
  const std::unique_ptr<Optimizer> optimizer =
      MakeOptimizer(RunDefaultOptimizer(), cpu, model->ParamCount());  // as a run trains
  const size_t per_sample = model->input_shape().count();
  std::vector<float> images(per_sample * static_cast<size_t>(batch));
  std::vector<int32_t> labels(static_cast<size_t>(batch));
  Rng rng(7);
  for (float& x : images) x = rng.Uniform(-1.0f, 1.0f);
  for (int32_t& y : labels) y = static_cast<int32_t>(rng.Below(model->num_classes()));

  std::vector<double> step_seconds;
  for (int64_t s = 0; s <= options.steps; ++s) {
    const auto t = std::chrono::steady_clock::now();
    model->SetBatch(images.data(), labels.data(), batch);
    model->ComputeGradients(static_cast<uint64_t>(s));
    optimizer->Step(model->params(), model->grads());
    model->backend().Synchronize();
    if (s > 0) step_seconds.push_back(Seconds(std::chrono::steady_clock::now() - t));
  }
  const ResidentMemory rss = ReadResidentMemory();
  const MemoryBreakdown m = PredictTrainingMemory(*model, batch, optimizer->slot_values());
  const double step = Median(step_seconds);
  const int64_t predicted = baseline + m.Total();
  // What one more sample costs: the figure the batch caps divide by.
  const int64_t per_sample_bytes = PredictBytesPerSample(*model);
  json j = {{"batch", batch},
            {"ms_per_step", 1e3 * step},
            {"samples_per_second", step > 0 ? batch / step : 0.0},
            {"baseline_rss", baseline},
            {"model_bytes", m.Total()},
            {"bytes_per_sample", per_sample_bytes},
            {"recompute", options.recompute},
            {"replayed_layers", model->ReplayedLayers()},
            {"activation_precision", ActivationPrecisionName(options.activation_precision)},
            {"packed_values", model->PackedValues()},
            {"predicted_bytes", predicted},
            {"peak_rss", rss.peak_bytes},
            {"error", static_cast<double>(predicted - rss.peak_bytes) /
                          static_cast<double>(std::max<int64_t>(rss.peak_bytes, 1))},
            {"breakdown",
             {{"weights", m.weights},
              {"gradients", m.gradients},
              {"running_stats", m.running_stats},
              {"optimizer", m.optimizer},
              {"activations", m.activations},
              {"workspaces", m.workspaces},
              {"batch", m.batch}}}};
  std::cout << j.dump() << "\n";
  return 0;
}

int RunProfile(const ProfileOptions& options) {
  char self[4096];
  const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) throw std::runtime_error("cannot find this program's own path (/proc/self/exe)");
  self[len] = '\0';
  const LoadedModel loaded = LoadModelFile(options.file);  // a bad file fails here, once
  json rows = json::array();
  for (int batch : options.batches) {
    std::vector<std::string> args{self,
                                  "measure-batch",
                                  options.file,
                                  "--batch",
                                  std::to_string(batch),
                                  "--device",
                                  options.device,
                                  "--threads",
                                  std::to_string(options.threads),
                                  "--steps",
                                  std::to_string(options.steps)};
    if (options.recompute) args.push_back("--recompute");
    args.push_back("--activation-precision");
    args.push_back(ActivationPrecisionName(options.activation_precision));
    rows.push_back(json::parse(RunChild(args)));
  }
  std::printf(
      "model %s, device %s, %lld thread(s), median of %lld steps per batch size, activations "
      "kept in %s%s\n",
      loaded.spec.name().c_str(), options.device.c_str(), static_cast<long long>(options.threads),
      static_cast<long long>(options.steps), ActivationPrecisionName(options.activation_precision),
      options.recompute ? ", recomputing" : "");
  std::printf("%6s  %10s  %10s  %13s  %13s  %11s  %13s  %12s  %8s\n", "batch", "ms/step",
              "samples/s", "baseline MiB", "model MiB", "KiB/sample", "predicted MiB",
              "measured MiB", "error %");
  constexpr double kMiB = 1 << 20;
  for (const json& r : rows)
    std::printf("%6d  %10.2f  %10.1f  %13.1f  %13.1f  %11.1f  %13.1f  %12.1f  %+8.1f\n",
                r["batch"].get<int>(), r["ms_per_step"].get<double>(),
                r["samples_per_second"].get<double>(), r["baseline_rss"].get<double>() / kMiB,
                r["model_bytes"].get<double>() / kMiB, r["bytes_per_sample"].get<double>() / 1024,
                r["predicted_bytes"].get<double>() / kMiB, r["peak_rss"].get<double>() / kMiB,
                100 * r["error"].get<double>());
  const json kept = KeptPerLayer(loaded.spec, options.recompute, options.activation_precision);
  const json by_setting = PerSampleBySetting(loaded.spec);
  PrintKeptPerLayer(kept);
  PrintPerSampleBySetting(by_setting, options.recompute, options.activation_precision);
  if (!options.json_path.empty()) {
    const json j = {{"model", loaded.spec.name()},
                    {"file", options.file},
                    {"device", options.device},
                    {"threads", options.threads},
                    {"steps", options.steps},
                    {"recompute", options.recompute},
                    {"activation_precision", ActivationPrecisionName(options.activation_precision)},
                    {"kept_per_layer", kept},
                    {"kib_per_sample_by_setting", by_setting},
                    {"batches", rows}};
    WriteFileAtomically(options.json_path, j.dump(2) + "\n");
  }
  return 0;
}

}  // namespace mt
