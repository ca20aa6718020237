// mthub --http-port in process: 8080 unless told (the struct's 0 keeps
// hubs in tests off it), 0 turns the dashboard off, and whether the port
// was named, which decides if a taken port is fatal (hub/http/hub_dashboard.cc);
// loopback and HTTPS unless --http-bind and --http-plain say otherwise.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hub/options/hub_options.h"

namespace mt {
namespace {

std::optional<int> ParseInto(std::vector<std::string> args, HubOptions& options) {
  args.insert(args.begin(), "mthub");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return ParseHubOptions(static_cast<int>(argv.size()), argv.data(), options);
}

TEST(HttpPortOption, DefaultsTo8080ButNotNamed) {
  EXPECT_EQ(HubConfig{}.http.port, 0);
  HubOptions options;
  ASSERT_FALSE(ParseInto({}, options).has_value());
  EXPECT_EQ(options.config.http.port, 8080);
  EXPECT_FALSE(options.config.http.port_explicit);
}

TEST(HttpPortOption, NamedPortsAndZeroForOff) {
  HubOptions named;
  ASSERT_FALSE(ParseInto({"--http-port", "9100"}, named).has_value());
  EXPECT_EQ(named.config.http.port, 9100);
  EXPECT_TRUE(named.config.http.port_explicit);
  HubOptions off;
  ASSERT_FALSE(ParseInto({"--http-port", "0"}, off).has_value());
  EXPECT_EQ(off.config.http.port, 0);
}

TEST(HttpPortOption, LoopbackAndHttpsUnlessToldAndNoLingerUnlessAsked) {
  HubOptions plain;
  ASSERT_FALSE(ParseInto({}, plain).has_value());
  EXPECT_EQ(plain.config.http.bind, "127.0.0.1");
  EXPECT_FALSE(plain.config.http.plain);
  EXPECT_EQ(plain.linger, 0);
  HubOptions told;
  ASSERT_FALSE(
      ParseInto({"--http-bind", "0.0.0.0", "--http-plain", "--linger", "30"}, told).has_value());
  EXPECT_EQ(told.config.http.bind, "0.0.0.0");
  EXPECT_TRUE(told.config.http.plain);
  EXPECT_EQ(told.linger, 30);
  HubOptions forever;
  ASSERT_FALSE(ParseInto({"--linger", "forever"}, forever).has_value());
  EXPECT_EQ(forever.linger, -1);
  HubOptions bad;
  EXPECT_EQ(ParseInto({"--linger", "-5"}, bad), std::optional<int>(2));
}

TEST(HttpPortOption, RefusesPortsOutOfRange) {
  for (const char* bad : {"65536", "-1", "web"}) {
    HubOptions options;
    EXPECT_EQ(ParseInto({"--http-port", bad}, options), std::optional<int>(2)) << bad;
  }
}

}  // namespace
}  // namespace mt
