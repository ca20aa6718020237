// The hub's side of its live views: what the run is, each step as it is
// applied (fed to LiveStatus), and the HTTP server that shows them
// (mthub --http-port).
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "hub/http/dashboard_server.h"
#include "hub/hub.h"
#include "hub/monitor/live_status.h"
#include "hub/monitor/status_source.h"

namespace mt {
namespace {

// Where a browser on another machine finds the hub: its host name when it
// listens on every address, else the address it listens on.
std::string UrlHost(const std::string& bind) {
  if (bind == "0.0.0.0" || bind == "::" || bind == "[::]") {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) == 0 && name[0]) return name;
    return "localhost";
  }
  if (bind.find(':') != std::string::npos && bind.front() != '[') return "[" + bind + "]";
  return bind;
}

}  // namespace

RunInfo Hub::LiveRunInfo() const {
  RunInfo r;
  r.model = spec_.name();
  r.dataset = config_.dataset;
  r.compression = config_.compression ? CompressionName(*config_.compression) : "auto";
  r.sync_every_setting = std::max(0, config_.local_sgd.sync_every);
  r.parameters = static_cast<int64_t>(master_->param_count());
  r.total_steps = plan_->total_steps();
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
  s.epoch = plan_->EpochOf(step) + 1;
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
  if (config_.http_port <= 0) return;
  try {
    dashboard_ =
        std::make_unique<DashboardServer>(config_.bind, config_.http_port, config_.token,
                                          [this] { return TakeSnapshot(*coordinator_, *live_); });
  } catch (const DashboardBindError& e) {
    // The default port taken (another hub on this machine, say) costs the
    // dashboard, not the run; a port the user named is a mistake to fix.
    if (config_.http_port_explicit)
      throw std::runtime_error(std::string(e.what()) +
                               ": --http-port names another port, 0 turns the dashboard off");
    spdlog::warn("{}; the hub runs without it (--http-port names another port, 0 turns it off)",
                 e.what());
    return;
  }
  spdlog::info("dashboard: http://{}:{}/{} (Prometheus /metrics, JSON /api/status; plain HTTP)",
               UrlHost(config_.bind), dashboard_->port(),
               config_.token.empty() ? "" : "?token=TOKEN");
}

}  // namespace mt
