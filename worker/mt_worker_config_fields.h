// Every field of mt_worker_config (worker/mt_worker.h) after struct_size,
// in the struct's order, with the org.mt.worker.WorkerConfig field that
// fills it on Android. One table, checked three ways, so a field added on
// one side only fails the build or a test:
//   - the compiler: the table covers the struct, field by field (below);
//   - tests/worker/worker_config_from_c_test.cc: each field reaches
//     WorkerConfig (worker/worker_config_from_c.h);
//   - tests/android/config_fields_agree.py: WorkerConfig.java has exactly
//     these fields, with these types, each with its builder method.
// The JNI bridge (deploy/android/app/src/main/cpp/mt_jni.cc) reads Java by
// it, and refuses to start when the loaded class does not match.
#pragma once

#include <cstddef>
#include <cstdint>
#include <variant>

#include "worker/mt_worker.h"

namespace mt::capi {

// Which mt_worker_config member a Java field fills; the wrapper fixes the
// Java type the field must have.
struct StringMember {
  const char* mt_worker_config::*member;
};
struct IntMember {
  int mt_worker_config::*member;
};
struct BooleanMember {  // a Java boolean into a C int flag
  int mt_worker_config::*member;
};
struct LongMember {
  int64_t mt_worker_config::*member;
};
struct DoubleMember {
  double mt_worker_config::*member;
};
using ConfigMember = std::variant<StringMember, IntMember, BooleanMember, LongMember, DoubleMember>;
// In ConfigMember's order.
inline constexpr const char* kJavaTypeNames[] = {"String", "int", "boolean", "long", "double"};
static_assert(sizeof kJavaTypeNames / sizeof *kJavaTypeNames == std::variant_size_v<ConfigMember>,
              "one Java type name per ConfigMember alternative");

struct ConfigField {
  const char* java_name;
  const char* c_name;
  // Where the C member lies, so the compiler can check the table covers the struct.
  size_t offset;
  size_t size;
  size_t align;
  ConfigMember member;
};

// MT_CONFIG_FIELD(C member, "Java field", String|Int|Boolean|Long|Double)
// clang-format off
#define MT_CONFIG_FIELD(c_member, java_name, Kind)                                       \
  ConfigField{java_name, #c_member, offsetof(mt_worker_config, c_member),                \
              sizeof(mt_worker_config::c_member),                                        \
              alignof(decltype(mt_worker_config::c_member)),                             \
              Kind##Member{&mt_worker_config::c_member}}
// clang-format on

// A new field of mt_worker_config is one line here, in the struct's order.
inline constexpr ConfigField kConfigFields[] = {
    MT_CONFIG_FIELD(hub, "hub", String),
    MT_CONFIG_FIELD(name, "name", String),
    MT_CONFIG_FIELD(token, "token", String),
    MT_CONFIG_FIELD(device, "device", String),
    MT_CONFIG_FIELD(threads, "threads", Int),
    MT_CONFIG_FIELD(data_dir, "dataDir", String),
    MT_CONFIG_FIELD(memory_budget_bytes, "memoryBudgetBytes", Long),
    MT_CONFIG_FIELD(connect_timeout_seconds, "connectTimeoutSeconds", Double),
    MT_CONFIG_FIELD(report_path, "reportPath", String),
    MT_CONFIG_FIELD(min_battery_percent, "minBatteryPercent", Int),
    MT_CONFIG_FIELD(require_charging, "requireCharging", Boolean),
    MT_CONFIG_FIELD(require_unmetered, "requireUnmetered", Boolean),
    MT_CONFIG_FIELD(max_temperature_c, "maxTemperatureC", Double),
    MT_CONFIG_FIELD(read_system_device_state, "readSystemDeviceState", Boolean),
    MT_CONFIG_FIELD(insecure, "insecure", Boolean),
    MT_CONFIG_FIELD(tls_ca_path, "tlsCaPath", String),
    MT_CONFIG_FIELD(hub_fingerprint, "hubFingerprint", String),
    MT_CONFIG_FIELD(state_dir, "stateDir", String),
    MT_CONFIG_FIELD(tls_cert_path, "tlsCertPath", String),
    MT_CONFIG_FIELD(tls_key_path, "tlsKeyPath", String),
    MT_CONFIG_FIELD(allow_data_dirs, "allowDataDirs", String),
};
#undef MT_CONFIG_FIELD

constexpr size_t AlignUp(size_t n, size_t align) { return (n + align - 1) / align * align; }

// True when each entry starts where the one before it ends (after
// alignment) and the last ends the struct: a field missing from the table,
// at the end or between two entries, leaves a gap. (A field squeezed into
// padding would not, but fields are only ever added at the end.)
constexpr bool TableCoversTheStruct() {
  size_t end = offsetof(mt_worker_config, struct_size) + sizeof(mt_worker_config::struct_size);
  for (const ConfigField& f : kConfigFields) {
    if (f.offset != AlignUp(end, f.align)) return false;
    end = f.offset + f.size;
  }
  return AlignUp(end, alignof(mt_worker_config)) == sizeof(mt_worker_config);
}
static_assert(offsetof(mt_worker_config, struct_size) == 0, "struct_size comes first");
static_assert(TableCoversTheStruct(),
              "mt_worker_config has a field kConfigFields lacks (or the table is out of the "
              "struct's order): add its MT_CONFIG_FIELD line, then the field in WorkerConfig.java "
              "and a check in tests/worker/worker_config_from_c_test.cc");

}  // namespace mt::capi
