// What the machine draws, from <sys_root>/class/power_supply, for the
// profiler's energy per step. Only a battery that is discharging says what
// the whole machine draws (on external power its current is what charges
// it, not what the machine uses), so every other case is unknown: a desktop,
// a VM, a laptop on its charger. Whole-machine power: other processes'
// share is in it too.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace mt {

class PowerMeter {
 public:
  // Finds the batteries once; never throws.
  explicit PowerMeter(const std::string& sys_root = "/sys");

  // Whether a battery is there to read at all.
  bool available() const { return !batteries_.empty(); }
  // Watts drawn now: the sum over batteries of power_now, or current_now x
  // voltage_now where a battery reports no power_now (sysfs units are micro-
  // watts, -amperes and -volts; some drivers sign the current). NaN when
  // unknown: no battery, one not discharging, or a value missing. Allocates
  // nothing.
  double Watts() const;

 private:
  struct Battery {
    std::string status, power_now, current_now, voltage_now;  // file paths
  };
  std::vector<Battery> batteries_;
};

// Integrates watts over time (trapezoids between samples): the energy from
// the first sample to the last, unknown if any sample was.
class EnergyMeter {
 public:
  // A reading `watts` (NaN: unknown) at `seconds` on any monotonic clock.
  void Sample(double seconds, double watts);
  bool known() const { return known_ && samples_ > 1; }
  // NaN unless known().
  double joules() const { return known() ? joules_ : NAN; }

 private:
  int64_t samples_ = 0;
  bool known_ = true;
  double last_seconds_ = 0, last_watts_ = 0, joules_ = 0;
};

}  // namespace mt
