#include "hub/evaluation/snapshot_evaluator.h"

#include <stdexcept>

#include "core/model/model_spec.h"
#include "core/train/recalibrate.h"
#include "core/util/process_stats.h"

namespace mt {

SnapshotEvaluator::SnapshotEvaluator(const proto::ModelSpec& spec, const Dataset& test,
                                     const Dataset* calibration, uint64_t seed)
    : backend_(1),
      model_(BuildModel(spec, backend_)),
      test_(test),
      calibration_(calibration),
      seed_(seed),
      params_(model_->ParamCount()) {
  result_.running_stats.resize(model_->RunningStatCount());
}

SnapshotEvaluator::~SnapshotEvaluator() {
  if (thread_.joinable()) thread_.join();
}

void SnapshotEvaluator::Start(const Model& model, int64_t step) {
  if (busy()) throw std::logic_error("an evaluation of a snapshot is still running");
  model_->Reserve(model.capacity());  // the master's evaluation batch, once
  model.GetParams(params_.data());
  model_->SetParams(params_.data());
  model.GetRunningStats(result_.running_stats.data());
  model_->SetRunningStats(result_.running_stats.data());
  done_ = false;
  error_.clear();
  thread_ = std::thread([this, step] {
    try {
      const double cpu_start = ThreadCpuSeconds();
      // As the hub's own recalibration (hub/hub_evaluation.cc).
      if (calibration_ && model_->RunningStatCount() > 0) {
        RecalibrateRunningStats(*model_, *calibration_, kRecalibrationBatches,
                                seed_ ^ static_cast<uint64_t>(step));
        model_->GetRunningStats(result_.running_stats.data());
      }
      result_.eval = Evaluate(*model_, test_);
      result_.cpu_seconds = ThreadCpuSeconds() - cpu_start;
    } catch (const std::exception& e) {
      error_ = e.what();
    }
    done_ = true;
  });
}

std::optional<SnapshotEvaluator::Result> SnapshotEvaluator::Take(bool wait) {
  if (!busy() || (!wait && !done_)) return std::nullopt;
  thread_.join();
  if (!error_.empty()) throw std::runtime_error("evaluating a snapshot: " + error_);
  return result_;
}

}  // namespace mt
