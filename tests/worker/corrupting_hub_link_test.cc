// The test build's hostile worker (tests/faulty_worker/): its link corrupts
// what the honest session sends, plain or packed, and the kinds of
// corruption parse as mtworker_faulty --corrupt-gradients takes them.
#include "tests/faulty_worker/corrupting_hub_link.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/compress/compression_proto.h"
#include "core/compress/gradient_codec.h"
#include "tests/support/files.h"
#include "tests/support/scripted_hub.h"

namespace mt {
namespace {

using faulty::CorruptEverySession;
using faulty::GradientCorruption;
using faulty::ParseGradientCorruption;
using test_support::ScriptedWorker;

// The floats of the one chunk a step sends, decoded as the hub would.
std::vector<float> SentFloats(const ScriptedWorker& w, Compression c) {
  EXPECT_EQ(w.sent().size(), 1u);
  const proto::GradientChunk& chunk = w.sent().at(0).gradient();
  EXPECT_EQ(chunk.compression(), ToProto(c));
  if (c == Compression::kNone) return {chunk.values().begin(), chunk.values().end()};
  std::vector<float> out(w.params());
  const std::string why =
      DecodeFloats(c, chunk.packed().data(), chunk.packed().size(), out.size(), out.data());
  EXPECT_EQ(why, "");
  return out;
}

// One step's contribution, honest or through `corruption`'s link.
std::vector<float> Step(ScriptedWorker& w, Compression c, const std::string& corruption = "") {
  w.Run({w.State(), ScriptedWorker::Plan(0, 0, 8, 0, 0, ToProto(c))}, nullptr,
        corruption.empty() ? HubLinkDecorator()
                           : CorruptEverySession(ParseGradientCorruption(corruption)));
  return SentFloats(w, c);
}

TEST(CorruptingHubLink, CorruptsWhatTravelsAsTheFlagSays) {
  const auto dir = test_support::FreshTempDir("corrupting-link");
  ScriptedWorker w(dir.string());
  const std::vector<float> honest = Step(w, Compression::kNone);
  ASSERT_TRUE(std::any_of(honest.begin(), honest.end(), [](float v) { return v != 0; }));
  const std::vector<float> flipped = Step(w, Compression::kNone, "sign-flip");
  const std::vector<float> scaled = Step(w, Compression::kNone, "scale:1e4");
  const std::vector<float> huge = Step(w, Compression::kNone, "flt-max");
  ASSERT_EQ(flipped.size(), honest.size());
  for (size_t i = 0; i < honest.size(); ++i) {
    EXPECT_EQ(flipped[i], -honest[i]) << i;
    EXPECT_EQ(scaled[i], 1e4f * honest[i]) << i;
    EXPECT_EQ(huge[i], std::signbit(honest[i]) ? -FLT_MAX : FLT_MAX) << i;
  }
  std::filesystem::remove_all(dir);
}

TEST(CorruptingHubLink, PackedChunksAreDecodedCorruptedAndPackedAgain) {
  const auto dir = test_support::FreshTempDir("corrupting-link-int8");
  ScriptedWorker w(dir.string(), "int8");
  const std::vector<float> honest = Step(w, Compression::kInt8);
  const std::vector<float> flipped = Step(w, Compression::kInt8, "sign-flip");
  ASSERT_EQ(flipped.size(), honest.size());
  float largest = 0;
  for (float v : honest) largest = std::max(largest, std::fabs(v));
  ASSERT_GT(largest, 0);
  // int8 keeps a scale per block: the flipped values are the honest ones
  // negated, within a step of that scale.
  for (size_t i = 0; i < honest.size(); ++i)
    EXPECT_NEAR(flipped[i], -honest[i], largest / 127) << i;
  std::filesystem::remove_all(dir);
}

TEST(CorruptingHubLink, KindsParseAsTheFlagTakesThem) {
  EXPECT_FALSE(ParseGradientCorruption("").active());
  EXPECT_FALSE(ParseGradientCorruption("none").active());
  EXPECT_EQ(ParseGradientCorruption("sign-flip").kind, GradientCorruption::Kind::kSignFlip);
  EXPECT_EQ(ParseGradientCorruption("flt-max").kind, GradientCorruption::Kind::kFltMax);
  const GradientCorruption scale = ParseGradientCorruption("scale:2.5");
  EXPECT_EQ(scale.kind, GradientCorruption::Kind::kScale);
  EXPECT_EQ(scale.factor, 2.5f);
  for (const char* bad : {"scale:", "scale:x", "scale:1e99", "scale:2x", "flip", "SIGN-FLIP"})
    EXPECT_THROW(ParseGradientCorruption(bad), std::invalid_argument) << bad;
}

}  // namespace
}  // namespace mt
