// mthub --dp-clip with --dp-epsilon through real processes over 127.0.0.1,
// TLS on (the default): the hub solves the noise for the budget, adds it
// to the workers' clipped sum, and every worker's weights still equal the
// hub's at each digest (the noised average is what travels); the epsilon
// spent is in the report, /api/status, /metrics and the exported model's
// mt.training, the same number everywhere, within the budget. A budget
// the run cannot meet is a usage error naming the smallest it can.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "core/privacy/dp_accountant.h"
#include "onnx/onnx_pb.h"
#include "tests/support/cluster_processes.h"
#include "tests/support/files.h"
#include "tests/support/http_client.h"
#include "tests/support/idx_writer.h"
#include "tests/support/prometheus_parser.h"
#include "tests/support/subprocess.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::ReadJson;

constexpr const char* kToken = "privacy-e2e-token";

test_support::HttpReply Get(int port, const std::string& path) {
  return test_support::HttpGet(port, path, kToken, test_support::Scheme::kHttps);
}

TEST(PrivacyE2e, EpsilonSpentIsReportedEverywhereAndWorkersAgreeWithTheHub) {
  const fs::path dir = test_support::FreshTempDir("privacy-e2e");
  test_support::WriteIdxDataset(dir.string(), 600, 100, 3);
  std::ofstream(dir / "token") << kToken << "\n";
  const int http_port = test_support::FreeTcpPort();
  std::unique_ptr<test_support::ChildProcess> hub;
  // 600 samples, global batch 30, 3 epochs: 60 rounds of every step.
  const int port =
      test_support::StartHub(hub, dir, {"--workers",      "3",
                                        "--dataset",      dir.string(),
                                        "--epochs",       "3",
                                        "--global-batch", "30",
                                        "--sync-every",   "1",
                                        "--digest-every", "1",
                                        "--dp-clip",      "1",
                                        "--dp-epsilon",   "100000",
                                        "--report",       (dir / "hub.json").string(),
                                        "--export",       (dir / "model.onnx").string(),
                                        "--token-file",   (dir / "token").string(),
                                        "--http-port",    std::to_string(http_port),
                                        "--linger",       "forever"});
  ASSERT_GT(port, 0);
  std::vector<std::unique_ptr<test_support::ChildProcess>> workers;
  for (int i = 0; i < 3; ++i)
    workers.push_back(test_support::StartWorker(dir, "w" + std::to_string(i), port,
                                                {"--token-file", (dir / "token").string()}));
  for (auto& w : workers) ASSERT_EQ(w->Wait(300), 0) << w->Log();
  // The hub lingers once its report is written: its live views stay up.
  for (int i = 0; i < 600 && !fs::exists(dir / "hub.json"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const test_support::HttpReply status = Get(http_port, "/api/status");
  const test_support::HttpReply metrics = Get(http_port, "/metrics");
  hub->Signal(SIGTERM);
  ASSERT_EQ(hub->Wait(60), 0) << hub->Log();

  const json r = ReadJson(dir / "hub.json");
  EXPECT_FALSE(r.value("tls_fingerprint", "").empty()) << "TLS must be on";
  ASSERT_TRUE(r.contains("differential_privacy")) << r.dump();
  const json& dp = r["differential_privacy"];
  EXPECT_EQ(dp["clip"], 1.0);
  EXPECT_EQ(dp["target_epsilon"], 100000.0);
  EXPECT_EQ(dp["noise_added_by"], "hub");
  EXPECT_EQ(dp["rounds"], 60);
  const double epsilon = dp["epsilon"].get<double>();
  EXPECT_GT(epsilon, 0.99 * 100000);  // the solved noise spends nearly all of it...
  EXPECT_LE(epsilon, 100000.0);       // ...and never more
  // What the accountant says those 60 rounds at that noise spend.
  const double sigma = dp["noise_multiplier"].get<double>();
  EXPECT_NEAR(dp::Epsilon(1, sigma, 60, 1e-5), epsilon, 1e-9 * epsilon);
  EXPECT_GT(r["test_accuracy"].get<double>(), 0.5);
  for (int i = 0; i < 3; ++i) {
    const json at_hub = test_support::ReportedWorker(r, "w" + std::to_string(i));
    EXPECT_GE(at_hub.value("digests_checked", 0), 5) << at_hub.dump();
    EXPECT_EQ(at_hub.value("resyncs", -1), 0) << at_hub.dump();
  }

  ASSERT_EQ(status.status, 200) << status.body;
  EXPECT_EQ(json::parse(status.body)["privacy"]["epsilon"], dp["epsilon"]);
  ASSERT_EQ(metrics.status, 200) << metrics.body;
  const auto spent =
      test_support::FindSamples(test_support::ParsePrometheus(metrics.body), "mt_hub_dp_epsilon");
  ASSERT_EQ(spent.size(), 1u) << metrics.body;
  EXPECT_NEAR(spent[0].value, epsilon, 1e-6 * epsilon);

  onnx::ModelProto m;
  std::ifstream in(dir / "model.onnx", std::ios::binary);
  ASSERT_TRUE(m.ParseFromIstream(&in));
  std::map<std::string, std::string> meta;
  for (const auto& p : m.metadata_props()) meta[p.key()] = p.value();
  const json training = json::parse(meta["mt.training"]);
  EXPECT_EQ(training["differential_privacy"]["epsilon"], dp["epsilon"]) << meta["mt.training"];
  fs::remove_all(dir);
}

TEST(PrivacyE2e, ABudgetTheRunCannotMeetIsRefusedWithTheSmallestItCan) {
  const fs::path dir = test_support::FreshTempDir("privacy-refusal");
  test_support::WriteIdxDataset(dir.string(), 600, 100, 3);
  const std::string mthub = test_support::BinaryPath("hub/mthub");
  const auto refused = test_support::RunProcess(
      {mthub, "--dataset", dir.string(), "--epochs", "50", "--global-batch", "30", "--dp-clip", "1",
       "--dp-epsilon", "0.05", "--http-port", "0", "--port", "0"},
      60);
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_THAT(refused.output, ::testing::HasSubstr("--dp-epsilon 0.05 cannot be met"));
  EXPECT_THAT(refused.output, ::testing::HasSubstr("the smallest it can meet is"));
  const auto no_noise = test_support::RunProcess({mthub, "--dp-clip", "1"}, 30);
  EXPECT_EQ(no_noise.exit_code, 2) << no_noise.output;
  EXPECT_THAT(no_noise.output, ::testing::HasSubstr("--dp-noise"));
  const auto lossy = test_support::RunProcess(
      {mthub, "--dp-clip", "1", "--dp-noise", "1", "--compress", "topk"}, 30);
  EXPECT_EQ(lossy.exit_code, 2) << lossy.output;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mt
