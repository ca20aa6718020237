// Evaluations that never hold the workers (mthub --eval-every): the master
// weights of a step are copied into a model of their own, and on a thread
// of its own their batch norm statistics are recomputed and the test set
// evaluated while the steps go on. Evaluated on the run thread, each
// evaluation held the workers at the next round's end until it finished:
// about 20 s for mobilenet-tiny's 10,000 test images, a round being 1.4 s
// (docs/benchmarks.md, Wi-Fi). The training loop collects the result
// (core/train/training_loop.h, RunHooks::StartEvaluation).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/data/dataset.h"
#include "core/model/model.h"
#include "core/train/evaluate.h"
#include "kernels/cpu/cpu_backend.h"
#include "model.pb.h"

namespace mt {

class SnapshotEvaluator {
 public:
  // `test` and `calibration` (null: the model has no running statistics)
  // must outlive it; they are only read, so the run thread may read them
  // meanwhile.
  SnapshotEvaluator(const proto::ModelSpec& spec, const Dataset& test, const Dataset* calibration,
                    uint64_t seed);
  // Waits for an evaluation still running.
  ~SnapshotEvaluator();

  struct Result {
    EvalResult eval;
    std::vector<float> running_stats;  // as recomputed for the snapshot
    double cpu_seconds = 0;            // the evaluating thread's
  };
  // Copies `model`'s weights and statistics now and starts evaluating
  // them. One at a time: the last one's result must have been taken.
  void Start(const Model& model, int64_t step);
  bool busy() const { return thread_.joinable(); }
  // The result once the evaluation is done (`wait`: waits for it);
  // nullopt while it runs, or when none was started. Throws what the
  // evaluation threw.
  std::optional<Result> Take(bool wait);

 private:
  kernels::CpuBackend backend_;
  std::unique_ptr<Model> model_;
  const Dataset& test_;
  const Dataset* calibration_;
  uint64_t seed_;
  std::vector<float> params_;
  std::thread thread_;
  std::atomic<bool> done_{false};
  Result result_;
  std::string error_;
};

}  // namespace mt
