// Device state from a fake /sys tree, and the policy that makes a worker leave.
#include "worker/device_state.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/files.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

void Put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text << "\n";
}

TEST(DeviceState, ReadsBatteryPowerAndTheHottestZone) {
  const fs::path sys = test_support::FreshTempDir("fake-sys");
  Put(sys / "class/power_supply/BAT0/type", "Battery");
  Put(sys / "class/power_supply/BAT0/capacity", "37");
  Put(sys / "class/power_supply/BAT0/status", "Discharging");
  Put(sys / "class/power_supply/AC/type", "Mains");
  Put(sys / "class/power_supply/AC/online", "0");
  Put(sys / "class/thermal/thermal_zone0/temp", "41500");
  Put(sys / "class/thermal/thermal_zone1/temp", "55000");
  Put(sys / "class/thermal/cooling_device0/temp", "99000");  // not a zone
  DeviceState s = ReadSystemDeviceState(sys.string());
  EXPECT_EQ(s.battery_percent, 37);
  EXPECT_EQ(s.charging, 0);
  EXPECT_EQ(s.unmetered, -1);
  EXPECT_DOUBLE_EQ(s.temperature_c, 55.0);
  // Plugged in: the mains supply decides, whatever the battery says.
  Put(sys / "class/power_supply/AC/online", "1");
  EXPECT_EQ(ReadSystemDeviceState(sys.string()).charging, 1);
  fs::remove_all(sys);
}

TEST(DeviceState, AMachineWithoutBatteryOrSensorsIsUnknown) {
  const fs::path sys = test_support::FreshTempDir("fake-sys-empty");
  const DeviceState s = ReadSystemDeviceState(sys.string());
  EXPECT_EQ(s.battery_percent, -1);
  EXPECT_EQ(s.charging, -1);
  EXPECT_TRUE(std::isnan(s.temperature_c));
  EXPECT_EQ(PolicyStopReason({50, true, true, 40}, s), "");  // unknown never stops a worker
  fs::remove_all(sys);
}

TEST(DevicePolicy, SaysWhyToLeave) {
  DeviceState s;
  s.battery_percent = 15;
  s.charging = 0;
  s.unmetered = 1;
  s.temperature_c = 38;
  // A reason means "leave"; it is what the app and the hub's report show,
  // so where it has a reading it names it.
  EXPECT_THAT(PolicyStopReason({20, false, false, 0}, s), HasSubstr("battery at 15%"));
  s.charging = 1;
  EXPECT_EQ(PolicyStopReason({20, false, false, 0}, s), "");  // low but charging: go on
  EXPECT_EQ(PolicyStopReason({0, true, false, 0}, s), "");
  s.charging = 0;
  EXPECT_NE(PolicyStopReason({0, true, false, 0}, s), "");  // charging required
  EXPECT_EQ(PolicyStopReason({0, false, true, 0}, s), "");  // unmetered so far
  s.unmetered = 0;
  EXPECT_NE(PolicyStopReason({0, false, true, 0}, s), "");
  EXPECT_EQ(PolicyStopReason({0, false, false, 40}, s), "");  // 38 C is below 40
  EXPECT_THAT(PolicyStopReason({0, false, false, 35}, s), HasSubstr("temperature 38.0 C"));
  EXPECT_EQ(PolicyStopReason({}, s), "");  // the default policy never leaves
}

}  // namespace
}  // namespace mt
