// The device's condition as an input to training: battery, power, network
// and temperature. A phone that trains on battery or on a metered network,
// or while hot, costs its owner more than its samples are worth, so the
// worker leaves the run (Leave, not a dropped stream) when its policy says
// so. On Linux the state is read from /sys; an embedder (the Android
// service) pushes its own through the C API instead.
#pragma once

#include <cmath>
#include <string>

namespace mt {

struct DeviceState {
  int battery_percent = -1;    // -1: unknown (no battery)
  int charging = -1;           // on external power: 1, 0, -1 unknown
  int unmetered = -1;          // on an unmetered network: 1, 0, -1 unknown
  double temperature_c = NAN;  // hottest thermal zone; NaN unknown
};

// Reads <sys_root>/class/power_supply and <sys_root>/class/thermal. Missing
// files leave fields unknown; never throws.
DeviceState ReadSystemDeviceState(const std::string& sys_root = "/sys");

struct DevicePolicy {
  int min_battery_percent = 0;     // leave below this while not charging; 0: never
  bool require_charging = false;   // leave when known not to be charging
  bool require_unmetered = false;  // leave when known to be on a metered network
  double max_temperature_c = 0;    // leave above this; 0: never
};

// Why the policy says leave, or "" to keep training. Unknown values never
// make a worker leave: a desktop without a battery trains.
std::string PolicyStopReason(const DevicePolicy& policy, const DeviceState& state);

}  // namespace mt
