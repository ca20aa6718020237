// hub/membership/network_strings.h: what a peer sends and the hub keeps is capped,
// valid UTF-8 and free of control characters, whatever came.
#include "hub/membership/network_strings.h"

#include <gtest/gtest.h>

#include <string>

namespace mt {
namespace {

TEST(BoundedText, ShortPlainTextIsKeptAsItCame) {
  EXPECT_EQ(BoundedText("pixel-7 (büro)", 128), "pixel-7 (büro)");
  EXPECT_EQ(BoundedText("", 128), "");
  EXPECT_EQ(BoundedText(std::string(128, 'a'), 128), std::string(128, 'a'));
}

TEST(BoundedText, LongTextIsCutToTheCapWithAMark) {
  const std::string cut = BoundedText(std::string(2 << 20, 'a'), 128);
  EXPECT_EQ(cut, std::string(125, 'a') + "...");
  EXPECT_EQ(BoundedText("abcdef", 2), "..");
}

TEST(BoundedText, ACutNeverSplitsACharacter) {
  // 'ü' is two bytes: 62 of them fill 124, the next would end past 125.
  std::string text;
  for (int i = 0; i < 100; ++i) text += "ü";
  const std::string cut = BoundedText(text, 128);
  EXPECT_LE(cut.size(), 128u);
  std::string expected;
  for (int i = 0; i < 62; ++i) expected += "ü";
  EXPECT_EQ(cut, expected + "...");
}

TEST(BoundedText, BytesThatAreNotUtf8AndControlCharactersBecomeQuestionMarks) {
  // A lone continuation byte, a truncated sequence, an overlong '/', a
  // surrogate, a forged log line.
  EXPECT_EQ(BoundedText("a\x80z", 16), "a?z");
  EXPECT_EQ(BoundedText("a\xC3", 16), "a?");
  EXPECT_EQ(BoundedText("\xC0\xAF", 16), "??");
  EXPECT_EQ(BoundedText("\xED\xA0\x80", 16), "???");
  EXPECT_EQ(BoundedText("w\n[error] forged\x7F", 32), "w?[error] forged?");
  EXPECT_EQ(BoundedText(std::string("a\0b", 3), 16), "a?b");
}

TEST(BoundStrings, EachKeptFieldGetsItsCap) {
  const std::string huge(1 << 20, 'x');
  proto::JoinRequest join;
  join.mutable_device()->set_name(huge);
  join.mutable_device()->set_opencl_device(huge);
  join.set_token(huge);  // compared, never kept: left alone
  BoundStrings(&join);
  EXPECT_EQ(join.device().name().size(), kMaxWorkerNameBytes);
  EXPECT_EQ(join.device().opencl_device().size(), kMaxDeviceTextBytes);
  EXPECT_EQ(join.token().size(), huge.size());
  proto::Hello hello;
  hello.set_placement(huge);
  BoundStrings(&hello);
  EXPECT_EQ(hello.placement().size(), kMaxPlacementBytes);
  proto::LeaveRequest leave;
  leave.set_reason(huge);
  BoundStrings(&leave);
  EXPECT_EQ(leave.reason().size(), kMaxLeaveReasonBytes);
}

}  // namespace
}  // namespace mt
