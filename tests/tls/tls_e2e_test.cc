// TLS as a user meets it: a default mthub speaks TLS to OpenSSL's own
// client and shows the fingerprint of the certificate it keeps, plaintext
// needs --insecure on both sides, and a worker pinned to another
// certificate stops at once instead of training with an impostor.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "tests/support/cluster_processes.h"
#include "tests/support/events.h"
#include "tests/support/files.h"
#include "tests/support/idx_writer.h"
#include "tls/certificate.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using test_support::ChildProcess;
using test_support::RunProcess;

// OpenSSL's client against 127.0.0.1:port: its exit code and output, and
// the SHA-256 fingerprint of the certificate it was shown ("" if none).
struct OpenSslView {
  int exit_code = -1;
  std::string output;
  std::string fingerprint;
};
OpenSslView OpenSslConnect(int port) {
  const std::string connect = "openssl s_client -connect 127.0.0.1:" + std::to_string(port) +
                              " -alpn h2 -brief </dev/null 2>&1";
  OpenSslView v;
  const auto r = RunProcess({"/bin/bash", "-c", connect}, 30);
  v.exit_code = r.exit_code;
  v.output = r.output;
  const auto fp = RunProcess(
      {"/bin/bash", "-c",
       "openssl s_client -connect 127.0.0.1:" + std::to_string(port) +
           " -alpn h2 </dev/null 2>/dev/null | openssl x509 -noout -fingerprint -sha256"},
      30);
  if (fp.exit_code == 0) v.fingerprint = tls::NormalizeFingerprint(fp.output);
  return v;
}

class TlsE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_support::FreshTempDir("tls-e2e");
    test_support::WriteIdxDataset(dir_.string(), 512, 128, 3);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::vector<std::string> HubArgs(std::vector<std::string> extra) const {
    std::vector<std::string> a = {"--workers",   "1",
                                  "--dataset",   dir_.string(),
                                  "--steps",     "4",
                                  "--state-dir", (dir_ / "hub").string(),
                                  "--report",    (dir_ / "hub.json").string()};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  fs::path dir_;
};

TEST_F(TlsE2e, ADefaultHubSpeaksTlsWithTheCertificateItKeeps) {
  std::unique_ptr<ChildProcess> hub;
  const int port = test_support::StartHub(hub, dir_, HubArgs({}));
  ASSERT_GT(port, 0);
  const OpenSslView view = OpenSslConnect(port);
  EXPECT_EQ(view.exit_code, 0) << view.output;
  EXPECT_THAT(view.output, testing::HasSubstr("TLSv1.3"));
  const std::string kept = tls::Fingerprint(test_support::ReadAll(dir_ / "hub" / "hub-cert.pem"));
  EXPECT_EQ(view.fingerprint, kept);

  // A worker pinned to it trains; the hub reports the same fingerprint.
  auto worker = test_support::StartWorker(dir_, "pinned", port, {"--hub-fingerprint", kept});
  EXPECT_EQ(worker->Wait(120), 0) << worker->Log();
  EXPECT_EQ(hub->Wait(60), 0) << hub->Log();
  EXPECT_EQ(test_support::ReadJson(dir_ / "hub.json")["tls_fingerprint"], kept);

  // Restarted, the hub presents the same certificate.
  const int again = test_support::StartHub(hub, dir_, HubArgs({}));
  ASSERT_GT(again, 0);
  EXPECT_EQ(OpenSslConnect(again).fingerprint, kept);
  hub->Signal(SIGTERM);
  hub->Wait(30);
}

TEST_F(TlsE2e, PlaintextOnlyWithInsecureOnBothSides) {
  std::unique_ptr<ChildProcess> hub;
  const int port = test_support::StartHub(hub, dir_, HubArgs({"--insecure"}));
  ASSERT_GT(port, 0);
  EXPECT_NE(OpenSslConnect(port).exit_code, 0);  // no TLS there
  // A default (TLS) worker cannot join a plaintext hub...
  auto tls_worker = test_support::StartWorker(dir_, "tls", port, {"--connect-timeout", "3"});
  EXPECT_EQ(tls_worker->Wait(60), 1) << tls_worker->Log();
  EXPECT_EQ(test_support::CountEvents(test_support::EventsOf(dir_, "hub"), "worker_joined"), 0);
  // ...a worker that says --insecure too can.
  auto plain = test_support::StartWorker(dir_, "plain", port, {"--insecure"});
  EXPECT_EQ(plain->Wait(120), 0) << plain->Log();
  EXPECT_EQ(hub->Wait(60), 0) << hub->Log();
  EXPECT_EQ(test_support::ReadJson(dir_ / "hub.json")["tls_fingerprint"], "");
}

TEST_F(TlsE2e, AWorkerPinnedToAnotherCertificateStopsAtOnceAndSaysWhy) {
  std::unique_ptr<ChildProcess> hub;
  const int port = test_support::StartHub(hub, dir_, HubArgs({}));
  ASSERT_GT(port, 0);
  const std::string other = tls::Fingerprint(tls::GenerateSelfSigned("impostor", {}).cert_pem);
  const auto start = std::chrono::steady_clock::now();
  auto worker = test_support::StartWorker(dir_, "wary", port,
                                          {"--hub-fingerprint", other, "--connect-timeout", "60"});
  EXPECT_EQ(worker->Wait(60), 1) << worker->Log();
  // Refused, not retried until --connect-timeout.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  const auto refused = test_support::ReadEvents(test_support::EventsOf(dir_, "wary"));
  ASSERT_EQ(test_support::CountEvents(refused, "hub_certificate_refused"), 1) << worker->Log();
  for (const auto& e : refused)
    if (e["event"] == "hub_certificate_refused") {
      EXPECT_EQ(e["expected"], other);
      EXPECT_EQ(e["presented"],
                tls::Fingerprint(test_support::ReadAll(dir_ / "hub" / "hub-cert.pem")));
    }
  EXPECT_EQ(test_support::CountEvents(test_support::EventsOf(dir_, "hub"), "worker_joined"), 0);
  hub->Signal(SIGTERM);
  hub->Wait(30);
}

}  // namespace
}  // namespace mt
