#include "core/profile/training_profiler.h"

#include <algorithm>
#include <cmath>

#include "core/profile/layer_flops.h"
#include "core/util/process_stats.h"
#include "core/util/seconds.h"

namespace mt {
namespace {

// JSON null for a figure that is not known (NaN), else the figure.
ReportJson OrNull(double v) { return std::isnan(v) ? ReportJson(nullptr) : ReportJson(v); }
ReportJson OrNull(int64_t v) { return v < 0 ? ReportJson(nullptr) : ReportJson(v); }

}  // namespace

TrainingProfiler::TrainingProfiler(const Model& model, const proto::ModelSpec& spec, int capacity,
                                   size_t optimizer_slot_floats, const ProfileSetup& setup)
    : model_(model),
      setup_(setup),
      capacity_(capacity),
      steps_(model.layers().size(), setup.warmup_steps),
      forward_flops_(ForwardFlopsPerSample(spec, model)),
      backward_flops_(BackwardFlopsPerSample(model, forward_flops_)),
      predicted_(PredictTrainingMemory(model, capacity, optimizer_slot_floats)),
      power_(setup.sys_root) {
  for (kernels::Backend* b : model.placement()) {
    size_t k = 0;
    while (k < backends_.size() && backends_[k].backend != b) ++k;
    if (k == backends_.size()) {
      // Measuring runs products on it; the model's own state is untouched.
      PeakRate peak = MeasureGemmPeak(*b, setup.peak_budget_seconds);
      if (b->Name() == "cpu")
        peak.method += " with " + std::to_string(setup.threads) + " thread(s)";
      backends_.push_back({b, std::move(peak)});
    }
    backend_of_.push_back(k);
  }
  if (setup.warmup_steps == 0) {
    window_open_ = true;
    window_begin_ = window_end_ = Clock::now();
    cpu_begin_ = cpu_end_ = ProcessCpuSeconds();
    energy_.Sample(0, power_.Watts());
  }
}

void TrainingProfiler::EndPass(int batch, double data_seconds, double pass_seconds) {
  steps_.AddPass(times_, batch, data_seconds, pass_seconds);
  const Clock::time_point now = Clock::now();
  if (!window_open_) {
    // The last warm-up pass ends here: the window of the figures opens.
    if (steps_.passes_seen() < steps_.warmup_steps()) return;
    window_open_ = true;
    window_begin_ = now;
    cpu_begin_ = ProcessCpuSeconds();
  }
  window_end_ = now;
  cpu_end_ = ProcessCpuSeconds();
  energy_.Sample(Seconds(now - window_begin_), power_.Watts());
}

void TrainingProfiler::EndOptimizerStep(double seconds) { steps_.AddOptimizerStep(seconds); }

double TrainingProfiler::ForwardMs(size_t i) const {
  return steps_.steps() ? 1e3 * steps_.forward(i) / static_cast<double>(steps_.steps()) : 0.0;
}

double TrainingProfiler::BackwardMs(size_t i) const {
  return steps_.steps() ? 1e3 * steps_.backward(i) / static_cast<double>(steps_.steps()) : 0.0;
}

double TrainingProfiler::GflopPerStep(size_t i) const {
  if (!steps_.steps()) return 0;
  return static_cast<double>(forward_flops_[i] + backward_flops_[i]) *
         static_cast<double>(steps_.samples()) / static_cast<double>(steps_.steps()) / 1e9;
}

double TrainingProfiler::GflopsPerSecond(size_t i) const {
  const double seconds = steps_.forward(i) + steps_.backward(i);
  if (seconds <= 0) return 0;
  return static_cast<double>(forward_flops_[i] + backward_flops_[i]) *
         static_cast<double>(steps_.samples()) / seconds / 1e9;
}

const PeakRate& TrainingProfiler::PeakOf(size_t layer) const {
  return backends_[backend_of_[layer]].peak;
}

double TrainingProfiler::WindowSeconds() const {
  return window_open_ ? Seconds(window_end_ - window_begin_) : 0.0;
}

double TrainingProfiler::CpuUtilisation() const {
  const double wall = WindowSeconds();
  return wall > 0 ? (cpu_end_ - cpu_begin_) / wall : NAN;
}

double TrainingProfiler::EnergyPerStep() const {
  // Sampled when the window opens and at the end of each counted pass.
  if (!energy_.known() || steps_.steps() < 1) return NAN;
  return energy_.joules() / static_cast<double>(steps_.steps());
}

ReportJson TrainingProfiler::MemoryJson() const {
  const ResidentMemory rss = ReadResidentMemory();
  const MemoryBreakdown& m = predicted_;
  ReportJson j;
  j["batch_capacity"] = capacity_;
  j["weights"] = m.weights;
  j["gradients"] = m.gradients;
  j["running_stats"] = m.running_stats;
  j["optimizer"] = m.optimizer;
  j["activations"] = m.activations;
  j["workspaces"] = m.workspaces;
  j["batch"] = m.batch;
  j["model_total"] = m.Total();
  j["datasets"] = setup_.data_bytes;
  j["baseline_rss"] = OrNull(setup_.baseline_rss_bytes);
  const int64_t predicted = setup_.baseline_rss_bytes < 0
                                ? -1
                                : setup_.baseline_rss_bytes + setup_.data_bytes + m.Total();
  j["predicted_total"] = OrNull(predicted);
  j["peak_rss"] = OrNull(rss.peak_bytes);
  j["current_rss"] = OrNull(rss.current_bytes);
  // What the kernel counts and the prediction does not: the CPU backend's
  // GEMM packing scratch and thread stacks, allocator slack, libraries
  // loaded late (an OpenCL driver), buffers of the transport.
  j["unaccounted"] = OrNull(predicted < 0 || rss.peak_bytes < 0 ? -1 : rss.peak_bytes - predicted);
  j["prediction_error"] = predicted > 0 && rss.peak_bytes > 0
                              ? ReportJson(static_cast<double>(predicted - rss.peak_bytes) /
                                           static_cast<double>(rss.peak_bytes))
                              : ReportJson(nullptr);
  return j;
}

ReportJson TrainingProfiler::ToJson() const {
  const double steps = static_cast<double>(std::max<int64_t>(steps_.steps(), 1));
  const double pass_ms = 1e3 * steps_.pass() / steps;
  ReportJson layers = ReportJson::array();
  for (size_t i = 0; i < model_.layers().size(); ++i) {
    const Layer& layer = *model_.layers()[i];
    const double gflops = GflopsPerSecond(i);
    const double peak = PeakOf(i).gflops_per_s;
    layers.push_back(
        {{"name", layer.name()},
         {"type", layer.Type()},
         {"backend", model_.placement()[i]->Name()},
         {"forward_ms", ForwardMs(i)},
         {"backward_ms", BackwardMs(i)},
         {"share_of_pass", pass_ms > 0 ? (ForwardMs(i) + BackwardMs(i)) / pass_ms : 0.0},
         {"forward_flops_per_sample", forward_flops_[i]},
         {"backward_flops_per_sample", backward_flops_[i]},
         {"gflops", GflopPerStep(i)},
         {"gflops_per_s", gflops},
         {"peak_share", peak > 0 ? gflops / peak : 0.0},
         {"params", layer.ParamCount()},
         {"activation_bytes",
          model_.layer_output_shape(i).count() * sizeof(float) * static_cast<size_t>(capacity_)},
         // Its state, and what it needs of the workspace its backend's layers share.
         {"workspace_bytes",
          layer.StateBytes(capacity_) + layer.WorkspaceFloats(capacity_) * sizeof(float)},
         // Its work is done and timed in that layer (core/model/fusion.cc).
         {"fused_into",
          layer.absorbed_by() ? ReportJson(layer.absorbed_by()->name()) : ReportJson(nullptr)}});
  }
  ReportJson peaks = ReportJson::array();
  for (const BackendPeak& b : backends_)
    peaks.push_back({{"backend", b.backend->Name()},
                     {"gflops_per_s", b.peak.gflops_per_s},
                     {"method", b.peak.method}});
  ReportJson profile;
  profile["steps"] = steps_.steps();
  profile["warmup_steps"] = steps_.warmup_steps();
  profile["mean_batch"] = static_cast<double>(steps_.samples()) / steps;
  profile["pass_ms"] = pass_ms;
  profile["layers_ms"] = 1e3 * steps_.accounted() / steps;
  profile["loss_ms"] = 1e3 * steps_.loss() / steps;
  profile["transfer_ms"] = 1e3 * steps_.transfer() / steps;
  profile["data_ms"] = 1e3 * steps_.data() / steps;
  profile["optimizer_ms"] = 1e3 * steps_.optimizer() / steps;
  profile["step_ms"] = 1e3 * (steps_.data() + steps_.pass() + steps_.optimizer()) / steps;
  profile["threads"] = setup_.threads;
  profile["peaks"] = std::move(peaks);
  profile["energy_source"] = power_.available() ? "battery (power_supply)" : "none";

  ReportJson j;
  j["layers"] = std::move(layers);
  j["memory"] = MemoryJson();
  const double cpu = CpuUtilisation();
  j["cpu_utilisation"] = OrNull(cpu);
  j["cpu_utilisation_per_thread"] = OrNull(cpu / std::max(setup_.threads, 1));
  j["energy_joules_per_step"] = OrNull(EnergyPerStep());
  j["profile"] = std::move(profile);
  return j;
}

void TrainingProfiler::AddTo(ReportJson& details) const {
  const ReportJson j = ToJson();
  for (const auto& [key, value] : j.items()) details[key] = value;
}

}  // namespace mt
