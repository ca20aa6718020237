// The C API's configuration reaches the worker's: every mt_worker_config
// field (the compiler holds worker/mt_worker_config_fields.h to the struct)
// set to a value other than its default arrives in WorkerConfig, through
// the conversion mt_worker_start itself uses. A C field that is never
// copied, or a new one without a check here, fails.
#include "worker/worker_config_from_c.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "worker/mt_worker_config_fields.h"

namespace mt {
namespace {

using ::testing::HasSubstr;

// How one C field is set to a value other than its default, and whether
// that value shows in a WorkerConfig.
struct FieldCheck {
  std::function<void(mt_worker_config&)> set;
  std::function<bool(const WorkerConfig&)> arrived;
};

// Keyed by the C field's name; one entry per field of the table.
const std::map<std::string, FieldCheck>& Checks() {
  using C = mt_worker_config;
  using W = WorkerConfig;
  static const std::map<std::string, FieldCheck> checks{
      {"hub",
       {[](C& c) { c.hub = "10.1.2.3:4567"; },
        [](const W& w) { return w.hub == "10.1.2.3:4567"; }}},
      {"name", {[](C& c) { c.name = "phone-7"; }, [](const W& w) { return w.name == "phone-7"; }}},
      {"token", {[](C& c) { c.token = "s3cret"; }, [](const W& w) { return w.token == "s3cret"; }}},
      {"device",
       {[](C& c) { c.device = "opencl"; },
        [](const W& w) { return w.device == DeviceChoice::kOpenCl; }}},
      {"threads", {[](C& c) { c.threads = 3; }, [](const W& w) { return w.threads == 3; }}},
      {"data_dir",
       {[](C& c) { c.data_dir = "/data/mine"; },
        [](const W& w) { return w.data_dir == "/data/mine"; }}},
      {"memory_budget_bytes",
       {[](C& c) { c.memory_budget_bytes = 123456789; },
        [](const W& w) { return w.memory_budget_bytes == 123456789; }}},
      {"connect_timeout_seconds",
       {[](C& c) { c.connect_timeout_seconds = 42.5; },
        [](const W& w) { return w.connect_timeout_seconds == 42.5; }}},
      {"report_path",
       {[](C& c) { c.report_path = "/r.json"; },
        [](const W& w) { return w.report_path == "/r.json"; }}},
      {"min_battery_percent",
       {[](C& c) { c.min_battery_percent = 37; },
        [](const W& w) { return w.policy.min_battery_percent == 37; }}},
      {"require_charging",
       {[](C& c) { c.require_charging = 1; },
        [](const W& w) { return w.policy.require_charging; }}},
      {"require_unmetered",
       {[](C& c) { c.require_unmetered = 1; },
        [](const W& w) { return w.policy.require_unmetered; }}},
      {"max_temperature_c",
       {[](C& c) { c.max_temperature_c = 45.5; },
        [](const W& w) { return w.policy.max_temperature_c == 45.5; }}},
      {"read_system_device_state",
       {[](C& c) { c.read_system_device_state = 0; },
        [](const W& w) { return !w.read_system_device_state; }}},
      {"insecure", {[](C& c) { c.insecure = 1; }, [](const W& w) { return w.tls.insecure; }}},
      {"tls_ca_path",
       {[](C& c) { c.tls_ca_path = "/ca.pem"; },
        [](const W& w) { return w.tls.ca_path == "/ca.pem"; }}},
      {"hub_fingerprint",
       {[](C& c) { c.hub_fingerprint = "SHA256:AB:CD"; },
        [](const W& w) { return w.tls.hub_fingerprint == "SHA256:AB:CD"; }}},
      {"state_dir",
       {[](C& c) { c.state_dir = "/state"; },
        [](const W& w) { return w.tls.known_hubs_path == "/state/known_hubs"; }}},
      {"tls_cert_path",
       {[](C& c) { c.tls_cert_path = "/me.pem"; },
        [](const W& w) { return w.tls.cert_path == "/me.pem"; }}},
      {"tls_key_path",
       {[](C& c) { c.tls_key_path = "/me.key"; },
        [](const W& w) { return w.tls.key_path == "/me.key"; }}},
      {"allow_data_dirs",
       {[](C& c) { c.allow_data_dirs = "/a:/b"; },
        [](const W& w) {
          return w.allowed_data_dirs == std::vector<std::string>{"/a", "/b"};
        }}},
  };
  return checks;
}

mt_worker_config Defaults() {
  mt_worker_config c;
  mt_worker_config_init(&c);
  c.hub = "127.0.0.1";  // required
  return c;
}

WorkerConfig FromC(mt_worker_config c) { return WorkerConfigFromC(&c); }

TEST(WorkerConfigFromC, EveryCFieldArrivesInWorkerConfig) {
  const WorkerConfig by_default = FromC(Defaults());
  for (const capi::ConfigField& field : capi::kConfigFields) {
    SCOPED_TRACE(field.c_name);
    const auto check = Checks().find(field.c_name);
    if (check == Checks().end()) {
      ADD_FAILURE() << "mt_worker_config." << field.c_name
                    << " has no check here: add how to set it and where it arrives";
      continue;
    }
    EXPECT_FALSE(check->second.arrived(by_default)) << "the test's value is the default";
    mt_worker_config c = Defaults();
    check->second.set(c);
    EXPECT_TRUE(check->second.arrived(FromC(c)))
        << "mt_worker_config." << field.c_name << " is not copied into WorkerConfig";
  }
  EXPECT_EQ(Checks().size(), std::size(capi::kConfigFields)) << "a check for a field that is gone";
}

TEST(WorkerConfigFromC, AllFieldsAtOnceArriveTogether) {
  mt_worker_config c = Defaults();
  for (const auto& [name, check] : Checks()) check.set(c);
  const WorkerConfig w = FromC(c);
  for (const auto& [name, check] : Checks()) EXPECT_TRUE(check.arrived(w)) << name;
}

TEST(WorkerConfigFromC, ACallerOfVersionOneGetsTheVersionOneMeaning) {
  mt_worker_config c = Defaults();
  for (const auto& [name, check] : Checks()) check.set(c);
  c.struct_size = offsetof(mt_worker_config, insecure);
  const WorkerConfig w = FromC(c);
  const WorkerConfig by_default = FromC(Defaults());
  EXPECT_EQ(w.tls.insecure, by_default.tls.insecure);  // TLS, whatever lies beyond its struct
  EXPECT_TRUE(w.tls.ca_path.empty());
  EXPECT_TRUE(w.allowed_data_dirs.empty());
  EXPECT_EQ(w.name, "phone-7");  // version-1 fields still arrive
}

TEST(WorkerConfigFromC, BadValuesAreRefusedNamingThem) {
  const auto refused = [](const std::function<void(mt_worker_config&)>& set) {
    mt_worker_config c = Defaults();
    set(c);
    try {
      WorkerConfigFromC(&c);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refused([](mt_worker_config& c) { c.device = "tpu"; }),
            "device 'tpu': expected auto, cpu or opencl");
  EXPECT_EQ(refused([](mt_worker_config& c) { c.device = "CPU"; }),
            "device 'CPU': expected auto, cpu or opencl");
  EXPECT_EQ(refused([](mt_worker_config& c) { c.hub = nullptr; }), "no hub address");
  EXPECT_EQ(refused([](mt_worker_config& c) { c.threads = -1; }),
            "threads must not be negative (0: 1)");
  EXPECT_EQ(refused([](mt_worker_config& c) { c.min_battery_percent = 101; }),
            "min_battery_percent must be within 0..100");
  EXPECT_EQ(refused([](mt_worker_config& c) { c.memory_budget_bytes = -1; }),
            "memory_budget_bytes must not be negative");
  EXPECT_THAT(refused([](mt_worker_config& c) { c.struct_size = 8; }),
              HasSubstr("mt_worker_config_init"));
  EXPECT_EQ(FromC(Defaults()).device, DeviceChoice::kCpu);  // NULL: cpu
}

}  // namespace
}  // namespace mt
