#include "hub/options/hub_option_checks.h"

#include <numeric>
#include <string>

#include "core/cli/command_line.h"

namespace mt {
namespace {

using cli::UsageError;

// What secure aggregation cannot go with: masking needs the dense ring
// encoding, and the hub sees only the sum, so it can neither weigh what it
// cannot see nor vote per worker.
void CheckSecureAggregation(const HubConfig& cfg) {
  const std::string sa = "--secure-aggregation";
  if (cfg.workers < 2)
    throw UsageError(sa +
                     " needs --workers 2 or more: the sum of one worker's update is that "
                     "update");
  if (cfg.compression && *cfg.compression != Compression::kNone)
    throw UsageError(sa + " masks every value in a dense ring: it cannot go with --compress " +
                     CompressionName(*cfg.compression) + " (give --compress none, or leave it)");
  if (cfg.aggregate == Aggregation::kTrimmedMean || cfg.aggregate == Aggregation::kMedian)
    throw UsageError(sa + ": the hub sees only the sum, so it cannot take a per-worker " +
                     (cfg.aggregate == Aggregation::kMedian ? "median" : "trimmed mean"));
  if (cfg.data.partition.kind != PartitionSpec::Kind::kIid && cfg.data.weight_by_share)
    throw UsageError(sa +
                     " with --partition weighs each worker by its batch: add "
                     "--weight-by-batch");
}

// Relations between flags; the Hub constructor would refuse most of these
// too, but only after loading the data, and as a runtime failure.
}  // namespace

void CheckRelations(const CLI::App& app, const HubConfig& cfg) {
  const bool fixed_batches = app.count("--worker-batches") > 0;
  if (fixed_batches && app.count("--batch-policy") > 0 && cfg.batch_policy != BatchPolicy::kFixed)
    throw UsageError(
        std::string(
            "--worker-batches fixes each worker's batch; it cannot go with --batch-policy ") +
        BatchPolicyName(cfg.batch_policy));
  if (fixed_batches && static_cast<int>(cfg.worker_batches.size()) != cfg.workers)
    throw UsageError("--worker-batches gives " + std::to_string(cfg.worker_batches.size()) +
                     " sizes but --workers is " + std::to_string(cfg.workers) +
                     "; give one size per worker");
  if (fixed_batches && cfg.global_batch > 0) {
    const int64_t sum =
        std::accumulate(cfg.worker_batches.begin(), cfg.worker_batches.end(), int64_t{0});
    if (sum != cfg.global_batch)
      throw UsageError("--global-batch " + std::to_string(cfg.global_batch) +
                       " is not the sum of --worker-batches (" + std::to_string(sum) +
                       "), which sets the global batch; give one of them");
  }
  if (cfg.global_batch > 0 && cfg.global_batch < cfg.workers)
    throw UsageError("--global-batch " + std::to_string(cfg.global_batch) +
                     " is smaller than --workers " + std::to_string(cfg.workers) +
                     ": every worker needs at least one sample per step");
  if (cfg.max_workers > 0 && cfg.max_workers < cfg.workers)
    throw UsageError("--max-workers " + std::to_string(cfg.max_workers) + " is below --workers " +
                     std::to_string(cfg.workers));
  if (cfg.local_sgd.drift_correction && !cfg.local_sgd.plain_averaging())
    throw UsageError(
        "--drift-correction derives each worker's correction from the round's plain average; "
        "it cannot go with --outer-momentum or --outer-lr");
  if (cfg.min_workers > cfg.workers)
    throw UsageError("--min-workers " + std::to_string(cfg.min_workers) +
                     " cannot exceed --workers " + std::to_string(cfg.workers));
  if (cfg.secure_aggregation) CheckSecureAggregation(cfg);
}

void ApplyResume(const std::string& resume_dir, HubConfig& cfg) {
  if (resume_dir.empty()) return;
  if (!cfg.checkpoint_dir.empty() && cfg.checkpoint_dir != resume_dir)
    throw UsageError("--resume " + resume_dir + " and --checkpoint-dir " + cfg.checkpoint_dir +
                     " differ; give one directory");
  cfg.checkpoint_dir = resume_dir;
  cfg.resume = true;
  if (!cfg.tuning.init_from.empty())
    throw UsageError(
        "--resume and --init-from: --resume continues a run, --init-from "
        "starts a new one from a model's weights; give one");
}

}  // namespace mt
