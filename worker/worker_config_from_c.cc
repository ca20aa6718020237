#include "worker/worker_config_from_c.h"

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>

#include "worker/hub_connection.h"
#include "worker/join_reply_check.h"

namespace mt {
namespace {

std::string Text(const char* s) { return s ? s : ""; }

}  // namespace

WorkerConfig WorkerConfigFromC(const mt_worker_config* c) {
  if (!c || c->struct_size < offsetof(mt_worker_config, read_system_device_state) + sizeof(int))
    throw std::invalid_argument(
        "no configuration, or one from an older header (call mt_worker_config_init)");
  if (!c->hub || !*c->hub) throw std::invalid_argument("no hub address");
  CheckHubAddress(c->hub);
  const std::string device_word = c->device ? c->device : "cpu";
  const std::optional<DeviceChoice> device = ParseDeviceChoice(device_word);
  if (!device)
    throw std::invalid_argument("device '" + device_word + "': expected " + DeviceChoiceList());
  if (c->threads < 0) throw std::invalid_argument("threads must not be negative (0: 1)");
  if (c->min_battery_percent < 0 || c->min_battery_percent > 100)
    throw std::invalid_argument("min_battery_percent must be within 0..100");
  if (c->memory_budget_bytes < 0)
    throw std::invalid_argument("memory_budget_bytes must not be negative");
  WorkerConfig cfg;
  cfg.hub = c->hub;
  cfg.name = Text(c->name);
  cfg.token = Text(c->token);
  cfg.device = *device;
  cfg.threads = c->threads > 0 ? c->threads : 1;
  cfg.data_dir = Text(c->data_dir);
  cfg.memory_budget_bytes = c->memory_budget_bytes;
  cfg.connect_timeout_seconds = c->connect_timeout_seconds > 0 ? c->connect_timeout_seconds : 600;
  cfg.report_path = Text(c->report_path);
  cfg.policy.min_battery_percent = c->min_battery_percent;
  cfg.policy.require_charging = c->require_charging != 0;
  cfg.policy.require_unmetered = c->require_unmetered != 0;
  cfg.policy.max_temperature_c = c->max_temperature_c;
  cfg.read_system_device_state = c->read_system_device_state != 0;
  // A caller built against version 1 knows nothing of these: TLS, trust on
  // first use, in the default state directory.
  if (c->struct_size >= offsetof(mt_worker_config, allow_data_dirs) + sizeof(const char*)) {
    if (c->allow_data_dirs) cfg.allowed_data_dirs = SplitDirList(c->allow_data_dirs);
    cfg.tls.insecure = c->insecure != 0;
    cfg.tls.ca_path = Text(c->tls_ca_path);
    cfg.tls.hub_fingerprint = Text(c->hub_fingerprint);
    if (c->state_dir && *c->state_dir)
      cfg.tls.known_hubs_path = std::string(c->state_dir) + "/known_hubs";
    cfg.tls.cert_path = Text(c->tls_cert_path);
    cfg.tls.key_path = Text(c->tls_key_path);
  }
  return cfg;
}

}  // namespace mt
