// --profile: every training step runs with Model::ComputeGradients
// synchronising around each layer, and this gathers what a user needs to see
// where time and memory go: per layer forward and backward time, GFLOP/s and
// share of the device's peak (measured once with a GEMM on each backend);
// the memory the model, optimizer and batch take, part by part, against the
// resident set the kernel measures; CPU utilisation; energy per step where a
// battery says what the machine draws. At the end: a table and the keys of
// a --report (`layers`, `memory`, `cpu_utilisation`, `energy_joules_per_step`,
// `profile`). A step allocates nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/profile/memory_breakdown.h"
#include "core/profile/peak_rate.h"
#include "core/profile/power_meter.h"
#include "core/profile/step_profile.h"
#include "core/train/run_summary.h"
#include "model.pb.h"

namespace mt {

struct ProfileSetup {
  int warmup_steps = 3;  // passes left out of the figures
  int threads = 1;       // CPU threads the kernels use, for utilisation per thread
  // The resident set before the model was built (binary, libraries,
  // runtime), and the bytes of datasets held besides the model; with them
  // the prediction covers the whole process. -1: not known.
  int64_t baseline_rss_bytes = -1;
  int64_t data_bytes = 0;
  std::string sys_root = "/sys";     // where power_supply is read
  double peak_budget_seconds = 0.2;  // per backend, to measure its GEMM peak
};

class TrainingProfiler {
 public:
  // Measures each backend's peak, so takes peak_budget_seconds per backend.
  // `model` must outlive the profiler and have been built from `spec`.
  TrainingProfiler(const Model& model, const proto::ModelSpec& spec, int capacity,
                   size_t optimizer_slot_floats, const ProfileSetup& setup);

  // What to hand Model::ComputeGradients; then EndPass with what it took.
  LayerTimes* times() { return &times_; }
  void EndPass(int batch, double data_seconds, double pass_seconds);
  void EndOptimizerStep(double seconds);

  const StepProfile& steps() const { return steps_; }
  const MemoryBreakdown& predicted() const { return predicted_; }

  // The keys a --report gets: `layers` (one object per model layer),
  // `memory`, `cpu_utilisation`, `energy_joules_per_step` (null when
  // unknown) and `profile` (steps, step times, peaks). Reads the resident
  // set now.
  ReportJson ToJson() const;
  // The same as a table for the log (profile_table.cc).
  std::string Table() const;
  // Adds ToJson()'s keys to a report's details.
  void AddTo(ReportJson& details) const;

 private:
  using Clock = std::chrono::steady_clock;
  struct BackendPeak {
    const kernels::Backend* backend;
    PeakRate peak;
  };
  // Figures of layer i per counted step.
  double ForwardMs(size_t i) const;
  double BackwardMs(size_t i) const;
  double GflopPerStep(size_t i) const;
  double GflopsPerSecond(size_t i) const;
  const PeakRate& PeakOf(size_t layer) const;
  double WindowSeconds() const;
  double CpuUtilisation() const;
  double EnergyPerStep() const;  // NaN when unknown
  ReportJson MemoryJson() const;

  const Model& model_;
  ProfileSetup setup_;
  int capacity_;
  LayerTimes times_;
  StepProfile steps_;
  std::vector<int64_t> forward_flops_, backward_flops_;  // per sample
  std::vector<BackendPeak> backends_;
  std::vector<size_t> backend_of_;  // per layer, into backends_
  MemoryBreakdown predicted_;
  PowerMeter power_;
  EnergyMeter energy_;
  bool window_open_ = false;
  Clock::time_point window_begin_, window_end_;
  double cpu_begin_ = 0, cpu_end_ = 0;
};

}  // namespace mt
