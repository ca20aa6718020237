// The dashboard's endpoints read while a hub trains, hub and workers in
// this process: every scrape answers and parses, the step never goes
// back. Here, unlike the e2e tests, deploy/tsan.sh sees the HTTP thread
// take its snapshots while the run thread and the transport feed them.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <filesystem>
#include <thread>

#include "tests/support/http_client.h"
#include "tests/support/idx_writer.h"
#include "tests/support/in_process_cluster.h"
#include "tests/support/prometheus_parser.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
// The hub's own certificate, as mthub serves it by default.
constexpr test_support::Scheme kHttps = test_support::Scheme::kHttps;

TEST(DashboardInProcess, ScrapesDuringTheRunAnswerAndTheStepNeverGoesBack) {
  const fs::path dir = test_support::FreshTempDir("dashboard-in-process");
  test_support::WriteIdxDataset(dir.string(), 256, 64, 7);
  HubConfig hc;
  hc.http.port = test_support::FreeTcpPort();
  ASSERT_GT(hc.http.port, 0);
  hc.max_steps = 150;
  hc.epochs = 0;
  hc.eval_every = 25;
  hc.global_batch = 32;

  std::atomic<bool> done{false};
  json report;
  std::thread training([&] {
    report = test_support::TrainInProcess(hc, dir, 2);
    done = true;
  });
  int scrapes = 0, during_training = 0;
  int64_t last_step = 0;
  while (!done) {
    const test_support::HttpReply status =
        test_support::HttpGet(hc.http.port, "/api/status", "", kHttps);
    const test_support::HttpReply metrics =
        test_support::HttpGet(hc.http.port, "/metrics", "", kHttps);
    if (status.status == 0 || metrics.status == 0) {
      // Not listening yet, or the run is over and the hub gone.
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    ASSERT_EQ(status.status, 200) << status.body;
    ASSERT_EQ(metrics.status, 200) << metrics.body;
    const json s = json::parse(status.body);
    const int64_t step = s.value("step", int64_t{-1});
    EXPECT_GE(step, last_step);
    last_step = step;
    const auto steps = test_support::FindSamples(test_support::ParsePrometheus(metrics.body),
                                                 "mt_hub_steps_total");
    ASSERT_EQ(steps.size(), 1u);
    EXPECT_GE(static_cast<int64_t>(steps[0].value), step);  // scraped after the status
    ++scrapes;
    during_training += s.value("state", "") == "training" && step > 0;
  }
  training.join();
  EXPECT_GT(scrapes, 0);
  EXPECT_GT(during_training, 0) << "no scrape while the hub trained";
  EXPECT_EQ(report.value("steps", int64_t{0}), 150);
  EXPECT_TRUE(report.contains("history")) << report.dump(1);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mt
