// The hub's side of its live views: what the run is, each step as it is
// applied (fed to LiveStatus), and the HTTP server that shows them
// (mthub --http-port, hub/http/hub_dashboard.h).
#include <algorithm>
#include <chrono>

#include "hub/http/hub_dashboard.h"
#include "hub/hub.h"
#include "hub/monitor/live_status.h"
#include "hub/monitor/status_source.h"

namespace mt {

RunInfo Hub::LiveRunInfo() const {
  RunInfo r;
  // The model as the user named it (the file's stem, or the preset): an
  // exported graph's own name is often the exporter's (PyTorch: torch_jit).
  r.model = record_.model_label.empty() ? spec_.name() : record_.model_label;
  r.dataset = config_.dataset;
  r.compression = config_.compression ? CompressionName(*config_.compression) : "auto";
  r.sync_every_setting = std::max(0, config_.local_sgd.sync_every);
  r.parameters = static_cast<int64_t>(master_->param_count());
  r.total_steps = plan_->total_steps();
  r.total_epochs = plan_->EpochsBegun(plan_->total_steps());
  r.global_batch = plan_->batch();
  r.workers_expected = config_.workers;
  r.first_step = coordinator_->steps_done();
  r.partition = config_.data.partition.ToString();
  r.partition_histograms = record_.partition_counts;
  r.class_names = record_.class_names;
  return r;
}

void Hub::RecordLive(const StepCoordinator::StepOutcome& outcome, int64_t step) {
  LiveStep s;
  s.step = step;
  s.steps = outcome.steps;
  // `step` steps are done: the epoch the last of them trained in, as the
  // report counts (EpochOf(step) + 1 would be the next one at an epoch's end).
  s.epoch = plan_->EpochsBegun(step);
  s.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - train_start_.wall).count();
  s.samples = outcome.samples;
  s.loss_sum = outcome.loss_sum;
  s.gradient_bytes_in = outcome.gradient_bytes_in;
  s.result_bytes_out = outcome.result_bytes_out;
  s.barrier_wait_seconds = outcome.barrier_wait_seconds;
  if (!live_->OnStep(s)) return;
  // A point of the history closed (every step at first, rarer as the run
  // grows): it keeps each worker's batch, for the report.
  std::vector<std::pair<std::string, int>> batches;
  coordinator_->ForEachWorker([&](const WorkerSlot& w, const BatchController&) {
    if (w.state == WorkerSlot::State::kActive) batches.emplace_back(w.name, w.last_batch);
  });
  live_->SetClosedPointBatches(std::move(batches));
}

void Hub::StartDashboard() {
  dashboard_ =
      StartDashboardServer(config_, [this] { return TakeSnapshot(*coordinator_, *live_); });
}

}  // namespace mt
