// The --report of every run (standalone, worker, hub): one schema, one
// meaning per key. Mode-specific details go under keys of their own in
// `details`, never as new meanings for a shared key.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace mt {

// Reports keep their keys in the order written, so they diff cleanly.
using ReportJson = nlohmann::ordered_json;

struct EpochSummary {
  int64_t epoch = 0;      // 1-based
  int64_t step = 0;       // steps done when it was evaluated
  bool complete = true;   // false: the run ended inside this epoch
  double train_loss = 0;  // mean over the epoch's samples trained in this run
  double test_loss = 0;
  double test_accuracy = 0;
  int64_t samples = 0;
  double train_seconds = 0;
};

// One evaluation on the test set, at any step: the run's time to accuracy.
struct EvalPoint {
  int64_t step = 0;     // steps done when evaluated
  double seconds = 0;   // wall time since training started
  int64_t samples = 0;  // trained in this process by then
  double test_accuracy = 0;
  double test_loss = 0;
};

// The evaluations as reports and the hub's /api/status write them.
ReportJson EvalHistoryJson(const std::vector<EvalPoint>& points);

struct RunSummary {
  std::string mode;  // standalone | worker | hub
  std::string model, dataset, device, placement, optimizer;
  int64_t threads = 1, parameters = 0;
  double lr = 0;
  uint64_t seed = 0;
  int64_t steps = 0;    // steps done, counting those before a resume
  int64_t samples = 0;  // trained in this process
  double train_seconds = 0;
  int64_t resumed_from_step = -1;  // -1 unless continued from a checkpoint
  bool stopped_early = false;      // ended before the planned steps
  std::string stop_reason;
  // The last evaluation on the test set; -1 when there was none.
  double test_accuracy = -1, test_loss = -1;
  // Mean training loss over the last epoch trained (-1: unknown to this
  // process), and the mean loss of the last step over all its samples.
  double train_loss = -1, last_step_loss = -1;
  std::vector<EpochSummary> epochs;
  std::vector<EvalPoint> eval_history;  // every evaluation, in order
  // --target-accuracy (-1: none) and when the run first reached it (-1: never).
  double target_accuracy = -1, seconds_to_target = -1;
  int64_t step_to_target = -1;
  ReportJson details = ReportJson::object();

  ReportJson ToJson() const;
  // What a model file keeps of the run that trained it (the ONNX metadata
  // mt.training): mode, dataset, steps, samples, accuracy, optimizer.
  std::string ModelNote() const;
  // Atomically; throws when the file cannot be written.
  void Write(const std::string& path) const;
};

}  // namespace mt
