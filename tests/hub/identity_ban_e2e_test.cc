// Quarantine per identity over mutual TLS, with real mthub and mtworker
// processes on 127.0.0.1: a worker dropped for hostile gradients may not
// join again with the same client certificate (Join: PERMISSION_DENIED, the
// worker stops with exit 1), while a new certificate is admitted. Before,
// the same certificate was judged afresh, and did damage again until caught.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "tests/support/cluster_processes.h"
#include "tests/support/events.h"
#include "tests/support/files.h"
#include "tests/support/idx_writer.h"
#include "tests/support/subprocess.h"
#include "tls/certificate.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using test_support::ChildProcess;
using ::testing::HasSubstr;

class IdentityBanE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_support::FreshTempDir("identity-ban-e2e");
    test_support::WriteIdxDataset(dir_.string(), 2000, 200, 11);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // A certificate and key of its own for `name`, added to the hub's
  // --tls-client-ca bundle; the worker's TLS options for it.
  std::vector<std::string> Certificate(const std::string& name) {
    const tls::CertificateAndKey c = tls::GenerateSelfSigned(name, {});
    std::ofstream(dir_ / "clients.pem", std::ios::app) << c.cert_pem;
    std::ofstream(dir_ / (name + ".pem")) << c.cert_pem;
    std::ofstream(dir_ / (name + ".key")) << c.key_pem;
    return {"--tls-cert", (dir_ / (name + ".pem")).string(), "--tls-key",
            (dir_ / (name + ".key")).string()};
  }
  fs::path dir_;
};

TEST_F(IdentityBanE2e, ADroppedCertificateIsRefusedAndANewOneAdmitted) {
  std::vector<std::vector<std::string>> honest_tls;
  for (const char* name : {"w0", "w1", "w2"}) honest_tls.push_back(Certificate(name));
  const std::vector<std::string> cert_a = Certificate("a");
  const std::vector<std::string> late_tls = Certificate("late");
  std::unique_ptr<ChildProcess> hub;
  // Four to start and to go on: with the hostile one dropped the run waits,
  // so the refused rejoin and the late worker come mid-run by construction.
  const int port = test_support::StartHub(hub, dir_,
                                          {"--workers", "4", "--min-workers", "4", "--dataset",
                                           dir_.string(), "--steps", "20", "--sync-every", "1",
                                           "--tls-client-ca", (dir_ / "clients.pem").string(),
                                           "--report", (dir_ / "hub.json").string()});
  ASSERT_GT(port, 0);
  std::vector<std::unique_ptr<ChildProcess>> honest;
  for (int i = 0; i < 3; ++i)
    honest.push_back(test_support::StartWorker(dir_, "w" + std::to_string(i), port, honest_tls[i]));
  std::vector<std::string> hostile = {"--corrupt-gradients", "scale:1e4"};
  hostile.insert(hostile.end(), cert_a.begin(), cert_a.end());
  auto bad = test_support::StartWorker(dir_, "bad", port, hostile, "tests/mtworker_faulty");
  const fs::path events = test_support::EventsOf(dir_, "hub");
  ASSERT_TRUE(test_support::WaitForEvent(events, "worker_dropped", {{"name", "bad"}}, 120))
      << hub->Log();
  bad->Wait(60);

  // The same certificate again, in a new process: refused at Join, for good.
  auto again = test_support::StartWorker(dir_, "bad-again", port, hostile, "tests/mtworker_faulty");
  EXPECT_EQ(again->Wait(60), 1) << again->Log();
  const auto refused = test_support::ReadEvents(test_support::EventsOf(dir_, "bad-again"));
  int join_refused = 0;
  for (const auto& e : refused)
    if (e.value("event", "") == "join_refused") {
      ++join_refused;
      EXPECT_EQ(e.value("grpc_code", -1), 7);  // PERMISSION_DENIED
      EXPECT_THAT(e.value("detail", ""), HasSubstr("dropped earlier in this run"));
    }
  EXPECT_EQ(join_refused, 1) << again->Log();
  EXPECT_EQ(test_support::CountEvents(events, "rejoin_refused", {{"name", "bad-again"}}), 1);
  EXPECT_EQ(test_support::CountEvents(events, "worker_joined", {{"name", "bad-again"}}), 0);

  // A new certificate is another worker: admitted, and the run completes.
  auto late = test_support::StartWorker(dir_, "late", port, late_tls);
  ASSERT_EQ(hub->Wait(180), 0) << hub->Log();
  EXPECT_EQ(late->Wait(60), 0) << late->Log();
  for (auto& w : honest) EXPECT_EQ(w->Wait(60), 0) << w->Log();
  EXPECT_EQ(test_support::CountEvents(events, "worker_ready", {{"name", "late"}}), 1);
  EXPECT_EQ(test_support::CountEvents(events, "worker_dropped", {{"name", "late"}}), 0);
  const auto report = test_support::ReadJson(dir_ / "hub.json");
  EXPECT_EQ(report["refused_rejoins"], 1);
  EXPECT_EQ(report["refused_contributions"], 1);
  EXPECT_EQ(report["steps"], 20);
  EXPECT_EQ(report["stop_reason"], "training complete");
}

}  // namespace
}  // namespace mt
