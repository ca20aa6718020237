// Why a worker cannot join, told apart as a user needs it: nothing
// listening (a hub may be starting: the worker keeps trying), a hub
// certificate its --tls-ca does not trust, a hub that wants a client
// certificate or refuses the one given, and plaintext against TLS either
// way. Each cause comes once as a "hub_connect_failed" event; those that
// retrying cannot mend stop the worker at once with exit 1.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/cluster_processes.h"
#include "tests/support/events.h"
#include "tests/support/files.h"
#include "tests/support/idx_writer.h"
#include "tls/certificate.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using test_support::ChildProcess;

class ConnectFailuresE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_support::FreshTempDir("connect-failures-e2e");
    test_support::WriteIdxDataset(dir_.string(), 512, 128, 3);
  }
  void TearDown() override {
    if (hub_) {
      hub_->Signal(SIGTERM);
      hub_->Wait(30);
    }
    fs::remove_all(dir_);
  }
  int StartHub(std::vector<std::string> extra, int port = 0) {
    std::vector<std::string> a = {"--workers", "1", "--dataset",   dir_.string(),
                                  "--steps",   "4", "--state-dir", (dir_ / "hub").string()};
    a.insert(a.end(), extra.begin(), extra.end());
    return test_support::StartHub(hub_, dir_, a, port);
  }
  fs::path Write(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    std::ofstream(path) << text;
    return path;
  }
  // Runs a worker that should stop at once: its exit code, and the causes
  // of its hub_connect_failed events. The worker would retry for 120 s.
  struct Stopped {
    int exit_code = -1;
    std::vector<std::string> causes;
    double seconds = 0;
  };
  Stopped RunWorker(const std::string& name, int port, std::vector<std::string> extra) {
    extra.insert(extra.end(), {"--connect-timeout", "120"});
    const auto start = std::chrono::steady_clock::now();
    auto worker = test_support::StartWorker(dir_, name, port, extra);
    Stopped s;
    s.exit_code = worker->Wait(150);
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (const auto& e : test_support::ReadEvents(test_support::EventsOf(dir_, name)))
      if (e["event"] == "hub_connect_failed") s.causes.push_back(e["cause"]);
    if (s.exit_code != 1) ADD_FAILURE() << worker->Log();
    return s;
  }
  fs::path dir_;
  std::unique_ptr<ChildProcess> hub_;
};

using Causes = std::vector<std::string>;

TEST_F(ConnectFailuresE2e, NothingListeningIsSaidOnceAndTheWorkerWaitsForTheHub) {
  // A port a hub had: nothing listens there now.
  const int port = StartHub({"--insecure"});
  ASSERT_GT(port, 0);
  hub_->Signal(SIGTERM);
  ASSERT_EQ(hub_->Wait(30), 0) << hub_->Log();

  auto worker =
      test_support::StartWorker(dir_, "early", port, {"--insecure", "--connect-timeout", "120"});
  const fs::path events = test_support::EventsOf(dir_, "early");
  ASSERT_TRUE(test_support::WaitForEvent(events, "hub_connect_failed",
                                         {{"cause", "connection_refused"}}, 30))
      << worker->Log();
  // Several connection attempts and probes later, the hub comes up there.
  std::this_thread::sleep_for(std::chrono::seconds(6));
  ASSERT_EQ(StartHub({"--insecure"}, port), port);
  EXPECT_EQ(worker->Wait(120), 0) << worker->Log();
  EXPECT_EQ(test_support::CountEvents(events, "hub_connect_failed"), 1) << worker->Log();
}

TEST_F(ConnectFailuresE2e, PlaintextAgainstTlsStopsAtOnceEitherWay) {
  const int tls_port = StartHub({});
  ASSERT_GT(tls_port, 0);
  const Stopped insecure = RunWorker("insecure", tls_port, {"--insecure"});
  EXPECT_EQ(insecure.causes, Causes{"hub_speaks_tls"});
  EXPECT_LT(insecure.seconds, 30);
  hub_->Signal(SIGTERM);
  hub_->Wait(30);

  const int plain_port = StartHub({"--insecure"});
  ASSERT_GT(plain_port, 0);
  const Stopped tls = RunWorker("tls", plain_port, {});
  EXPECT_EQ(tls.causes, Causes{"hub_speaks_plaintext"});
  EXPECT_LT(tls.seconds, 30);
}

TEST_F(ConnectFailuresE2e, AHubCertificateTheCaDoesNotVouchForStopsAtOnce) {
  const int port = StartHub({});
  ASSERT_GT(port, 0);
  const fs::path other_ca =
      Write("other-ca.pem", tls::GenerateSelfSigned("other", {"127.0.0.1"}).cert_pem);
  const Stopped s = RunWorker("wrong-ca", port, {"--tls-ca", other_ca.string()});
  EXPECT_EQ(s.causes, Causes{"tls_handshake_failed"});
  EXPECT_LT(s.seconds, 30);
  EXPECT_EQ(test_support::CountEvents(test_support::EventsOf(dir_, "hub"), "worker_joined"), 0);
}

TEST_F(ConnectFailuresE2e, MutualTlsWithoutOrWithAStrangersCertificateStopsAtOnce) {
  const tls::CertificateAndKey member = tls::GenerateSelfSigned("member", {});
  const tls::CertificateAndKey stranger = tls::GenerateSelfSigned("stranger", {});
  const int port = StartHub({"--tls-client-ca", Write("clients.pem", member.cert_pem).string()});
  ASSERT_GT(port, 0);

  const Stopped none = RunWorker("no-cert", port, {});
  EXPECT_EQ(none.causes, Causes{"client_certificate_required"});
  EXPECT_LT(none.seconds, 30);

  const Stopped wrong = RunWorker("stranger", port,
                                  {"--tls-cert", Write("stranger.pem", stranger.cert_pem).string(),
                                   "--tls-key", Write("stranger.key", stranger.key_pem).string()});
  EXPECT_EQ(wrong.causes, Causes{"tls_handshake_failed"});
  EXPECT_LT(wrong.seconds, 30);

  // The member's certificate opens the door: the probe refuses no one.
  auto member_worker =
      test_support::StartWorker(dir_, "member", port,
                                {"--tls-cert", Write("member.pem", member.cert_pem).string(),
                                 "--tls-key", Write("member.key", member.key_pem).string()});
  EXPECT_EQ(member_worker->Wait(120), 0) << member_worker->Log();
  EXPECT_EQ(hub_->Wait(60), 0) << hub_->Log();
  hub_.reset();
}

}  // namespace
}  // namespace mt
