// --memory-budget's sizes (core/cli/validators.h): 256MB was refused while
// 256M and 256MiB passed (issue 44); every spelling of K, M and G now
// means the same power of 1024, and a wrong one names the accepted forms.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/cli/validators.h"

namespace mt {
namespace {

// The bytes `text` means, or the validator's refusal.
std::string Bytes(std::string text) {
  const std::string error = cli::ByteSize()(text);
  return error.empty() ? text : "refused: " + error;
}

TEST(ByteSize, KMAndGWithOrWithoutBOrIBArePowersOf1024) {
  const std::string mib256 = std::to_string(256LL << 20);
  for (const char* text : {"256M", "256MB", "256MiB", "256mb", "256m", "256 MB", "256Mib"})
    EXPECT_EQ(Bytes(text), mib256) << text;
  EXPECT_EQ(Bytes("1GB"), std::to_string(1LL << 30));
  EXPECT_EQ(Bytes("1.5GiB"), std::to_string(3LL << 29));
  EXPECT_EQ(Bytes("64KB"), "65536");
  EXPECT_EQ(Bytes("1048576"), "1048576");
  EXPECT_EQ(Bytes("1048576B"), "1048576");
}

TEST(ByteSize, AnythingElseIsRefusedNamingTheAcceptedForms) {
  for (const char* text : {"256XB", "lots", "256MBB", "-1M", "0", "256 M B", "M"})
    EXPECT_THAT(Bytes(text), ::testing::AllOf(::testing::HasSubstr("256MB"),
                                              ::testing::HasSubstr("powers of 1024"),
                                              ::testing::HasSubstr(std::string("'") + text + "'")))
        << text;
}

}  // namespace
}  // namespace mt
