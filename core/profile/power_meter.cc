#include "core/profile/power_meter.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace mt {
namespace {

namespace fs = std::filesystem;

// The first line of a small sysfs file into `out` (NUL-terminated, newline
// cut); false when it cannot be read. No allocation, so it can run per step.
bool ReadSmallFile(const std::string& path, char* out, size_t size) {
  if (path.empty()) return false;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t got = read(fd, out, size - 1);
  close(fd);
  if (got <= 0) return false;
  out[got] = '\0';
  out[std::strcspn(out, "\n")] = '\0';
  return true;
}

bool ReadMicros(const std::string& path, double* out) {
  char text[64];
  if (!ReadSmallFile(path, text, sizeof text)) return false;
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (end == text) return false;
  *out = std::abs(static_cast<double>(v)) * 1e-6;
  return true;
}

std::string IfExists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec) ? p.string() : std::string();
}

}  // namespace

PowerMeter::PowerMeter(const std::string& sys_root) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(sys_root) / "class" / "power_supply", ec)) {
    std::string type;
    std::getline(std::ifstream(e.path() / "type"), type);
    if (type != "Battery") continue;
    Battery b{IfExists(e.path() / "status"), IfExists(e.path() / "power_now"),
              IfExists(e.path() / "current_now"), IfExists(e.path() / "voltage_now")};
    if (!b.power_now.empty() || (!b.current_now.empty() && !b.voltage_now.empty()))
      batteries_.push_back(std::move(b));
  }
}

double PowerMeter::Watts() const {
  if (batteries_.empty()) return NAN;
  double watts = 0;
  for (const Battery& b : batteries_) {
    char status[32];
    if (!ReadSmallFile(b.status, status, sizeof status) || std::strcmp(status, "Discharging") != 0)
      return NAN;
    double power = 0, current = 0, voltage = 0;
    if (ReadMicros(b.power_now, &power))
      watts += power;
    else if (ReadMicros(b.current_now, &current) && ReadMicros(b.voltage_now, &voltage))
      watts += current * voltage;
    else
      return NAN;
  }
  return watts;
}

void EnergyMeter::Sample(double seconds, double watts) {
  if (std::isnan(watts)) known_ = false;
  if (known_ && samples_ > 0) joules_ += 0.5 * (watts + last_watts_) * (seconds - last_seconds_);
  last_seconds_ = seconds;
  last_watts_ = watts;
  ++samples_;
}

}  // namespace mt
