#include "hub/http/linger.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "core/util/atomic_file.h"
#include "hub/http/hub_dashboard.h"
#include "hub/monitor/report_snapshot.h"

namespace mt {

void Linger::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
  }
  cv_.notify_all();
}

void Linger::Wait(int seconds) {
  std::unique_lock<std::mutex> lock(mu_);
  if (seconds < 0)
    cv_.wait(lock, [this] { return stopped_; });
  else
    cv_.wait_for(lock, std::chrono::seconds(seconds), [this] { return stopped_; });
}

int ServeReport(const HubConfig& config, const std::string& report_path, Linger& linger) {
  StatusSnapshot snapshot;
  try {
    snapshot = SnapshotFromReport(ReportJson::parse(ReadFile(report_path)));
  } catch (const std::exception& e) {
    spdlog::error("--serve-report {}: {}", report_path, e.what());
    return 1;
  }
  if (config.http.port <= 0) {
    spdlog::error("--serve-report needs a dashboard port (--http-port)");
    return 1;
  }
  const auto started = std::chrono::steady_clock::now();
  std::unique_ptr<DashboardServer> server;
  try {
    server = StartDashboardServer(config, [snapshot, started] {
      StatusSnapshot s = snapshot;
      s.uptime_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      return s;
    });
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
  if (!server) return 1;  // the default port taken: said
  spdlog::info("showing the run of {} ({} steps, {}) until SIGINT/SIGTERM", report_path,
               snapshot.step, snapshot.stop_reason);
  linger.Wait(-1);
  return 0;
}

}  // namespace mt
