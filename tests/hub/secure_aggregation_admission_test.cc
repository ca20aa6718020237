// mthub --secure-aggregation at the door: what the flag may go with, and a
// worker that cannot mask its updates refused at Join, clearly.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hub/options/hub_options.h"
#include "tests/hub/fake_workers.h"

namespace mt {
namespace {

using test_support::InProcessHub;

std::optional<int> Parse(std::vector<std::string> args, HubOptions* options) {
  args.insert(args.begin(), "mthub");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return ParseHubOptions(static_cast<int>(argv.size()), argv.data(), *options);
}

TEST(SecureAggregationAdmission, TheFlagRefusesWhatCannotSeeOrEncodeMaskedUpdates) {
  HubOptions ok;
  ASSERT_FALSE(Parse({"--workers", "3", "--secure-aggregation"}, &ok).has_value());
  EXPECT_TRUE(ok.config.secure_aggregation);
  // --compress auto becomes none: masking needs the dense ring.
  ASSERT_TRUE(ok.config.compression.has_value());
  EXPECT_EQ(*ok.config.compression, Compression::kNone);
  for (const std::vector<std::string>& refused :
       {std::vector<std::string>{"--workers", "1", "--secure-aggregation"},
        {"--workers", "3", "--secure-aggregation", "--compress", "topk"},
        {"--workers", "3", "--secure-aggregation", "--aggregate", "median"},
        {"--workers", "3", "--secure-aggregation", "--aggregate", "trimmed-mean"},
        {"--workers", "3", "--secure-aggregation", "--partition", "classes:2"}}) {
    HubOptions options;
    EXPECT_EQ(Parse(refused, &options), 2) << refused[refused.size() - 1];
  }
}

TEST(SecureAggregationAdmission, AWorkerThatCannotMaskIsRefusedAndOneThatCanIsTold) {
  InProcessHub hub(3, 1);
  hub.config.secure_aggregation = true;
  hub.Rebuild();
  proto::JoinRequest join;
  proto::JoinReply reply;
  join.set_protocol_version(wire::kProtocolVersion);
  const HubStatus refused = hub.coordinator->Join(join, "t", &reply);
  EXPECT_EQ(refused.code, HubStatus::Code::kFailedPrecondition);
  EXPECT_NE(refused.message.find("--secure-aggregation"), std::string::npos) << refused.message;
  join.set_secure_aggregation(true);
  ASSERT_TRUE(hub.coordinator->Join(join, "t", &reply).ok());
  ASSERT_TRUE(reply.has_secure_aggregation());
  EXPECT_EQ(reply.secure_aggregation().threshold(), 2);  // a majority of 3
  EXPECT_EQ(reply.secure_aggregation().clip(), 16.0F);
  hub.coordinator->Finish("over", -1);
}

TEST(SecureAggregationAdmission, APlainHubSaysNothingOfIt) {
  InProcessHub hub(3, 1);
  proto::JoinRequest join;
  proto::JoinReply reply;
  join.set_protocol_version(wire::kProtocolVersion);
  ASSERT_TRUE(hub.coordinator->Join(join, "t", &reply).ok());
  EXPECT_FALSE(reply.has_secure_aggregation());
  hub.coordinator->Finish("over", -1);
}

}  // namespace
}  // namespace mt
