// The embeddable worker (worker/mt_worker.h) against a real mthub process:
// start, poll, stop, the device policy, and the errors an app must see.
#include "worker/mt_worker.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>

#include <chrono>
#include <filesystem>
#include <functional>
#include <thread>

#include "tests/support/cluster_processes.h"
#include "tests/support/events.h"
#include "tests/support/files.h"
#include "tests/support/idx_writer.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

mt_worker_status Poll(const mt_worker* w) {
  mt_worker_status s{};
  s.struct_size = sizeof s;
  EXPECT_EQ(mt_worker_poll(w, &s), 0);
  return s;
}

// Polls until `done` holds or timeout_s passes; returns the last status.
// Polling is how an app follows the worker: the API has nothing to wait on.
mt_worker_status PollUntil(const mt_worker* w,
                           const std::function<bool(const mt_worker_status&)>& done,
                           double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  mt_worker_status s = Poll(w);
  while (!done(s) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    s = Poll(w);
  }
  return s;
}

class CApi : public ::testing::Test {
 protected:
  void StartHub(std::vector<std::string> extra) {
    dir_ = test_support::FreshTempDir("c-api");
    test_support::WriteIdxDataset(dir_.string(), 1000, 100, 3);
    std::vector<std::string> args = {"--workers",   "1",        "--dataset",
                                     dir_.string(), "--report", (dir_ / "hub.json").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    port_ = test_support::StartHub(hub_, dir_, args);
    ASSERT_GT(port_, 0);
    address_ = "127.0.0.1:" + std::to_string(port_);
    mt_worker_config_init(&config_);
    config_.hub = address_.c_str();
    config_.name = "embedded";
    config_.connect_timeout_seconds = 30;
    config_.read_system_device_state = 0;
  }
  fs::path HubEvents() const { return test_support::EventsOf(dir_, "hub"); }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  fs::path dir_;
  std::unique_ptr<test_support::ChildProcess> hub_;
  int port_ = 0;
  std::string address_;
  mt_worker_config config_{};
};

TEST_F(CApi, StartsTrainsReportsAndStopsCleanly) {
  StartHub({"--steps", "100000"});
  char error[256] = "untouched";
  mt_worker* w = mt_worker_start(&config_, error, sizeof error);
  ASSERT_NE(w, nullptr) << error;
  EXPECT_STREQ(error, "");
  const mt_worker_status s = PollUntil(
      w, [](const auto& s) { return s.steps_trained >= 20; }, 120);
  EXPECT_EQ(s.state, MT_WORKER_TRAINING) << mt_worker_state_name(s.state) << " " << s.last_error;
  EXPECT_GE(s.steps_trained, 20);
  EXPECT_GE(s.step, 19);
  EXPECT_GT(s.batch, 0);
  EXPECT_GT(s.loss, 0);
  EXPECT_EQ(mt_worker_stop(w, 30), 0);
  const mt_worker_status end = Poll(w);
  EXPECT_EQ(end.state, MT_WORKER_DONE) << end.last_error;
  EXPECT_STREQ(end.stop_reason, "stopped by the app");
  mt_worker_free(w);
  // The hub was told (Leave), with the reason, not left to find a broken stream.
  EXPECT_TRUE(test_support::WaitForEvent(
      HubEvents(), "worker_left", {{"name", "embedded"}, {"detail", "stopped by the app"}}, 10))
      << hub_->Log();
}

TEST_F(CApi, RunsToTheEndOfTheHubsRun) {
  StartHub({"--steps", "30"});
  mt_worker* w = mt_worker_start(&config_, nullptr, 0);
  ASSERT_NE(w, nullptr);
  const mt_worker_status s = PollUntil(
      w, [](const auto& s) { return s.state >= MT_WORKER_DONE; }, 120);
  EXPECT_EQ(s.state, MT_WORKER_DONE) << s.last_error;
  EXPECT_EQ(s.steps_trained, 30);
  EXPECT_GE(s.test_accuracy, 0);
  EXPECT_STREQ(s.stop_reason, "training complete");
  mt_worker_free(w);
  EXPECT_EQ(hub_->Wait(30), 0);
}

TEST_F(CApi, LeavesWhenTheDevicePolicySaysSo) {
  StartHub({"--steps", "100000"});
  config_.min_battery_percent = 20;
  mt_worker* w = mt_worker_start(&config_, nullptr, 0);
  ASSERT_NE(w, nullptr);
  ASSERT_GE(PollUntil(
                w, [](const auto& s) { return s.steps_trained >= 5; }, 120)
                .steps_trained,
            5);
  mt_device_state low{15, 0, 1, 30.0};
  mt_worker_set_device_state(w, &low);
  const mt_worker_status s = PollUntil(
      w, [](const auto& s) { return s.state >= MT_WORKER_DONE; }, 60);
  EXPECT_EQ(s.state, MT_WORKER_DONE) << s.last_error;
  EXPECT_THAT(std::string(s.stop_reason), HasSubstr("battery at 15%"));
  // The hub got the same reason the app sees.
  const nlohmann::json left = {{"name", "embedded"}, {"detail", std::string(s.stop_reason)}};
  EXPECT_TRUE(test_support::WaitForEvent(HubEvents(), "worker_left", left, 10)) << hub_->Log();
  mt_worker_free(w);
}

TEST(CApiErrors, BadConfigurationsAreRefusedAtStartWithAReason) {
  mt_worker_config c;
  mt_worker_config_init(&c);
  char error[256];
  EXPECT_EQ(mt_worker_start(&c, error, sizeof error), nullptr);
  EXPECT_STREQ(error, "no hub address");
  c.hub = "no-such-host.invalid:50051";
  EXPECT_EQ(mt_worker_start(&c, error, sizeof error), nullptr);
  EXPECT_THAT(std::string(error), HasSubstr("cannot resolve 'no-such-host.invalid'"));
  c.hub = "127.0.0.1:99999";
  EXPECT_EQ(mt_worker_start(&c, error, sizeof error), nullptr);
  EXPECT_THAT(std::string(error), HasSubstr("1..65535"));
  c.hub = "127.0.0.1";
  c.device = "tpu";
  EXPECT_EQ(mt_worker_start(&c, error, sizeof error), nullptr);
  EXPECT_THAT(std::string(error), HasSubstr("tpu"));
  c.device = nullptr;
  c.threads = -2;
  EXPECT_EQ(mt_worker_start(&c, error, sizeof error), nullptr);
  EXPECT_STREQ(error, "threads must not be negative (0: 1)");
  c.threads = 0;
  EXPECT_EQ(mt_worker_start(nullptr, error, sizeof error), nullptr);
  char tiny[8];
  c.device = nullptr;
  c.hub = "";
  EXPECT_EQ(mt_worker_start(&c, tiny, sizeof tiny), nullptr);
  EXPECT_EQ(std::string(tiny), "no hub ");  // truncated, terminated
  mt_worker_free(nullptr);
  EXPECT_EQ(mt_worker_stop(nullptr, 1), 0);
}

TEST(CApiErrors, ContradictoryTlsSettingsAreRefusedAtStart) {
  mt_worker_config c;
  mt_worker_config_init(&c);
  c.hub = "127.0.0.1:1";
  char error[256];
  c.hub_fingerprint = "SHA256:12:34";
  EXPECT_EQ(mt_worker_start(&c, error, sizeof error), nullptr);
  EXPECT_THAT(std::string(error), HasSubstr("SHA256:12:34"));
  c.hub_fingerprint = nullptr;
  c.insecure = 1;
  c.tls_ca_path = "/etc/hostname";
  EXPECT_EQ(mt_worker_start(&c, error, sizeof error), nullptr);
  EXPECT_THAT(std::string(error), HasSubstr("insecure"));
  c.tls_ca_path = "/no/such/ca.pem";
  c.insecure = 0;
  EXPECT_EQ(mt_worker_start(&c, error, sizeof error), nullptr);
  EXPECT_THAT(std::string(error), HasSubstr("/no/such/ca.pem"));
}

TEST(CApiErrors, AVersionOneConfigurationGetsTlsWithTrustOnFirstUse) {
  mt_worker_config c;
  mt_worker_config_init(&c);
  c.hub = "127.0.0.1:1";
  c.connect_timeout_seconds = 1;
  c.read_system_device_state = 0;
  // What a caller built against version 1 passes: the struct ends before
  // the TLS fields, whatever bytes follow it in memory.
  c.struct_size = offsetof(mt_worker_config, read_system_device_state) + sizeof(int);
  c.insecure = 1;
  c.tls_ca_path = reinterpret_cast<const char*>(0x1);  // never read
  char error[256];
  mt_worker* w = mt_worker_start(&c, error, sizeof error);
  ASSERT_NE(w, nullptr) << error;
  mt_worker_free(w);
}

TEST(CApiErrors, AnUnreachableHubEndsInFailedWithTheReason) {
  mt_worker_config c;
  mt_worker_config_init(&c);
  c.hub = "127.0.0.1:1";  // nothing listens on port 1
  c.connect_timeout_seconds = 1;
  c.read_system_device_state = 0;
  mt_worker* w = mt_worker_start(&c, nullptr, 0);
  ASSERT_NE(w, nullptr);
  const mt_worker_status s = PollUntil(
      w, [](const auto& s) { return s.state >= MT_WORKER_DONE; }, 60);
  EXPECT_EQ(s.state, MT_WORKER_FAILED);
  EXPECT_THAT(std::string(s.last_error), HasSubstr("not reachable"));
  mt_worker_free(w);
}

}  // namespace
}  // namespace mt
