// mthub --http-port in process: 8080 unless told (the struct's 0 keeps
// hubs in tests off it), 0 turns the dashboard off, and whether the port
// was named, which decides if a taken port is fatal (hub/monitor/hub_live.cc).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hub/hub_options.h"

namespace mt {
namespace {

std::optional<int> ParseInto(std::vector<std::string> args, HubOptions& options) {
  args.insert(args.begin(), "mthub");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return ParseHubOptions(static_cast<int>(argv.size()), argv.data(), options);
}

TEST(HttpPortOption, DefaultsTo8080ButNotNamed) {
  EXPECT_EQ(HubConfig{}.http_port, 0);
  HubOptions options;
  ASSERT_FALSE(ParseInto({}, options).has_value());
  EXPECT_EQ(options.config.http_port, 8080);
  EXPECT_FALSE(options.config.http_port_explicit);
}

TEST(HttpPortOption, NamedPortsAndZeroForOff) {
  HubOptions named;
  ASSERT_FALSE(ParseInto({"--http-port", "9100"}, named).has_value());
  EXPECT_EQ(named.config.http_port, 9100);
  EXPECT_TRUE(named.config.http_port_explicit);
  HubOptions off;
  ASSERT_FALSE(ParseInto({"--http-port", "0"}, off).has_value());
  EXPECT_EQ(off.config.http_port, 0);
}

TEST(HttpPortOption, RefusesPortsOutOfRange) {
  for (const char* bad : {"65536", "-1", "web"}) {
    HubOptions options;
    EXPECT_EQ(ParseInto({"--http-port", bad}, options), std::optional<int>(2)) << bad;
  }
}

}  // namespace
}  // namespace mt
