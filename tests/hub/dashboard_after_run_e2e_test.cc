// The dashboard once training is over: mthub --linger keeps the finished
// run on it until stopped (it used to vanish as the run ended), and
// mthub --serve-report shows that run's report as the same page, with the
// same figures, without training.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "model_io/model_file.h"
#include "tests/support/chromium.h"
#include "tests/support/cluster_processes.h"
#include "tests/support/files.h"
#include "tests/support/http_client.h"
#include "tests/support/idx_writer.h"
#include "tests/support/prometheus_parser.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::ChildProcess;
using test_support::HttpGet;
using test_support::Scheme;

// /api/status once its state is `state`; null (and a failure) after 90 s.
json AwaitState(int port, const std::string& state, Scheme scheme) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  json last;
  while (std::chrono::steady_clock::now() < deadline) {
    const test_support::HttpReply r = HttpGet(port, "/api/status", "", scheme);
    if (r.status == 200) {
      last = json::parse(r.body);
      if (last.value("state", "") == state) return last;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ADD_FAILURE() << "no state " << state << " in 90 s; last: " << last.dump();
  return json();
}

TEST(DashboardAfterRun, LingerKeepsTheFinishedRunAndServeReportShowsTheSame) {
  const fs::path dir = test_support::FreshTempDir("dashboard-after-run");
  test_support::WriteIdxDataset(dir.string(), 256, 64, 5);
  const fs::path report = dir / "hub.json";
  // LeNet-5 in a file named my_net, its graph named as PyTorch names
  // every export: the dashboard names the model after the file.
  proto::ModelSpec spec = LoadModelFile("lenet5").spec;
  spec.set_name("torch_jit");
  const fs::path model = dir / "my_net.txt";
  SaveModelFile(model.string(), spec, {});
  const int http_port = test_support::FreeTcpPort();
  std::unique_ptr<ChildProcess> hub;
  // Plain HTTP here (--http-plain); HTTPS is the default the other tests use.
  const int port = test_support::StartHub(
      hub, dir,
      {"--workers", "1", "--dataset", dir.string(), "--steps", "32", "--model", model.string(),
       "--eval-every", "10", "--report", report.string(), "--http-port", std::to_string(http_port),
       "--http-plain", "--linger", "forever"});
  ASSERT_GT(port, 0);
  auto worker = test_support::StartWorker(dir, "solo", port);
  ASSERT_EQ(worker->Wait(120), 0) << worker->Log();
  // The run is over, the hub still up with its final state.
  const json finished = AwaitState(http_port, "finished", Scheme::kHttp);
  ASSERT_FALSE(finished.is_null()) << hub->Log();
  EXPECT_EQ(finished.value("step", 0), 32);
  EXPECT_EQ(finished["run"].value("model", ""), "my_net");
  // 32 steps of 64 from 256 samples: the run ends with its 8th epoch (not
  // the 9th, which would begin with the next step).
  EXPECT_EQ(finished["run"].value("total_epochs", 0), 8);
  EXPECT_EQ(finished.value("epoch", 0), 8);
  EXPECT_EQ(finished.value("samples_per_second_over", ""), "recent");
  // The report follows "finished" closely, and comes before the lingering.
  for (int i = 0; i < 300 && !fs::exists(report); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(fs::exists(report)) << hub->Log();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(HttpGet(http_port, "/api/status").status, 200) << "the dashboard went with the run";
  hub->Signal(SIGTERM);
  EXPECT_EQ(hub->Wait(30), 0) << hub->Log();

  // The report as the dashboard, over HTTPS (the default).
  const int view_port = test_support::FreeTcpPort();
  ChildProcess viewer({test_support::BinaryPath("hub/mthub"), "--serve-report", report.string(),
                       "--http-port", std::to_string(view_port)},
                      (dir / "viewer.log").string());
  const json shown = AwaitState(view_port, "finished", Scheme::kHttps);
  ASSERT_FALSE(shown.is_null()) << viewer.Log();
  for (const char* key :
       {"step", "epoch", "samples", "test_accuracy", "stop_reason", "workers_total"})
    EXPECT_EQ(shown[key], finished[key]) << key;
  EXPECT_EQ(shown["run"], finished["run"]);
  EXPECT_EQ(shown["evaluations"].size(), finished["evaluations"].size());
  EXPECT_EQ(shown["history"]["points"].size(), finished["history"]["points"].size());
  ASSERT_EQ(shown["workers"].size(), 1u);
  EXPECT_EQ(shown["workers"][0]["name"], "solo");
  EXPECT_EQ(shown["workers"][0]["steps"], finished["workers"][0]["steps"]);
  const test_support::HttpReply metrics = HttpGet(view_port, "/metrics", "", Scheme::kHttps);
  ASSERT_EQ(metrics.status, 200);
  const auto steps =
      test_support::FindSamples(test_support::ParsePrometheus(metrics.body), "mt_hub_steps_total");
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].value, 32);
  // The report's samples/s is the run's mean, and the view says so.
  EXPECT_EQ(shown.value("samples_per_second_over", ""), "run");
  const test_support::HttpReply page = HttpGet(view_port, "/", "", Scheme::kHttps);
  EXPECT_NE(page.body.find("id=\"loss-chart\""), std::string::npos);
  viewer.Signal(SIGTERM);
  EXPECT_EQ(viewer.Wait(30), 0) << viewer.Log();

  // Not a report: a runtime failure, said.
  const test_support::ProcessResult bad = test_support::RunProcess(
      {test_support::BinaryPath("hub/mthub"), "--serve-report", (dir / "solo.log").string(),
       "--http-port", std::to_string(view_port)},
      30);
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_NE(bad.output.find("--serve-report"), std::string::npos) << bad.output;
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);
}

// The page over a finished run (mthub --serve-report of a report written
// here): what a finished run leaves is not shown as if it were live.
TEST(DashboardAfterRun, HeadlessChromiumShowsAFinishedRunAsFinished) {
  if (!test_support::HaveChromium())
    GTEST_SKIP() << "no " << test_support::kChromium << " (deploy/install-deps.sh installs it)";
  const fs::path dir = test_support::FreshTempDir("dashboard-finished-page");
  const json report = {{"mode", "hub"},
                       {"model", "my_net"},
                       {"dataset", "photos"},
                       {"total_steps", 40},
                       {"total_epochs", 2},
                       {"steps", 40},
                       {"samples", 2560},
                       {"train_seconds", 2.6},
                       {"samples_per_second", 984.6},
                       {"compression", "auto"},
                       {"final_compression", "lowrank"},
                       {"sync_every", "auto"},
                       {"final_sync_every", 4},
                       {"stop_reason", "training complete"},
                       {"epochs", {{{"epoch", 1}}, {{"epoch", 2}}}},
                       // A Join that never opened its stream, long ago.
                       {"joins_without_stream", 1},
                       // Gone: the hub no longer measures its pace (-1 in the report).
                       {"workers",
                        {{{"id", 1},
                          {"name", "phone"},
                          {"state", "gone"},
                          {"steps", 40},
                          {"ms_per_sample", -1.0},
                          {"device", "cpu"}}}}};
  const fs::path file = dir / "hub.json";
  std::ofstream(file) << report.dump();
  const int port = test_support::FreeTcpPort();
  ChildProcess viewer({test_support::BinaryPath("hub/mthub"), "--serve-report", file.string(),
                       "--http-port", std::to_string(port), "--http-plain"},
                      (dir / "viewer.log").string());
  ASSERT_FALSE(AwaitState(port, "finished", Scheme::kHttp).is_null()) << viewer.Log();
  const std::string dom = test_support::DumpDom("http://127.0.0.1:" + std::to_string(port) + "/",
                                                dir / "chromium", 1500);
  viewer.Signal(SIGTERM);
  EXPECT_EQ(viewer.Wait(30), 0) << viewer.Log();
  ASSERT_FALSE(dom.empty()) << "chromium printed no DOM";
  EXPECT_TRUE(std::regex_search(dom, std::regex("id=\"epoch\"[^>]*>2 / 2<"))) << dom;
  // No pace for a gone worker: a dash, not -1.000.
  EXPECT_EQ(dom.find("-1.000"), std::string::npos) << dom;
  EXPECT_NE(dom.find("data-worker=\"phone\""), std::string::npos) << dom;
  // Nothing waits for a stream once the run is over (the page's script,
  // in the dump too, holds the chip's markup: a drawn one has a count).
  EXPECT_FALSE(std::regex_search(dom, std::regex("id=\"joins-pending\"><b>[0-9]"))) << dom;
  EXPECT_TRUE(std::regex_search(dom, std::regex("id=\"rate-label\"[^>]*>Samples/s · run mean<")))
      << dom;
  // The compression tile shows its value whole.
  EXPECT_NE(dom.find(">lowrank (auto)</div>"), std::string::npos) << dom;
  EXPECT_EQ(dom.find("data-cut=\"1\""), std::string::npos) << dom;
  EXPECT_NE(dom.find("data-cut=\"0\""), std::string::npos) << dom;
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);
}

}  // namespace
}  // namespace mt
