#include "worker/device_state.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace mt {
namespace {

namespace fs = std::filesystem;

bool ReadLine(const fs::path& p, std::string* out) {
  std::ifstream in(p);
  return static_cast<bool>(std::getline(in, *out));
}

bool ReadLong(const fs::path& p, long* out) {
  std::string line;
  if (!ReadLine(p, &line)) return false;
  char* end = nullptr;
  const long v = std::strtol(line.c_str(), &end, 10);
  if (end == line.c_str()) return false;
  *out = v;
  return true;
}

}  // namespace

DeviceState ReadSystemDeviceState(const std::string& sys_root) {
  DeviceState s;
  std::error_code ec;
  const fs::path supplies = fs::path(sys_root) / "class" / "power_supply";
  bool any_supply = false, external_online = false;
  for (const auto& e : fs::directory_iterator(supplies, ec)) {
    std::string type, status;
    if (!ReadLine(e.path() / "type", &type)) continue;
    long v = 0;
    if (type == "Battery") {
      if (ReadLong(e.path() / "capacity", &v))
        s.battery_percent = static_cast<int>(std::clamp(v, 0L, 100L));
      // "Not charging" is a full battery held on external power.
      if (ReadLine(e.path() / "status", &status) && status != "Unknown")
        s.charging = status == "Charging" || status == "Full" || status == "Not charging";
    } else if (ReadLong(e.path() / "online", &v)) {
      any_supply = true;
      external_online = external_online || v == 1;
    }
  }
  if (any_supply && (s.charging < 0 || external_online)) s.charging = external_online;
  const fs::path thermal = fs::path(sys_root) / "class" / "thermal";
  for (const auto& e : fs::directory_iterator(thermal, ec)) {
    long milli = 0;
    if (e.path().filename().string().rfind("thermal_zone", 0) != 0 ||
        !ReadLong(e.path() / "temp", &milli))
      continue;
    const double c = milli / 1000.0;
    if (c > -50 && c < 200)
      s.temperature_c = std::isnan(s.temperature_c) ? c : std::max(s.temperature_c, c);
  }
  return s;
}

std::string PolicyStopReason(const DevicePolicy& p, const DeviceState& s) {
  char buf[128];
  if (p.min_battery_percent > 0 && s.battery_percent >= 0 &&
      s.battery_percent < p.min_battery_percent && s.charging != 1) {
    std::snprintf(buf, sizeof buf, "battery at %d%% and not charging (minimum %d%%)",
                  s.battery_percent, p.min_battery_percent);
    return buf;
  }
  if (p.require_charging && s.charging == 0) return "not charging (charging required)";
  if (p.require_unmetered && s.unmetered == 0) return "on a metered network (unmetered required)";
  if (p.max_temperature_c > 0 && !std::isnan(s.temperature_c) &&
      s.temperature_c > p.max_temperature_c) {
    std::snprintf(buf, sizeof buf, "temperature %.1f C above %.1f C", s.temperature_c,
                  p.max_temperature_c);
    return buf;
  }
  return "";
}

}  // namespace mt
