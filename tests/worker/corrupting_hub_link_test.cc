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

#include "core/compress/gradient_codec.h"
#include "tests/support/files.h"
#include "tests/support/scripted_hub.h"
#include "wire/compression_proto.h"

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
                           : CorruptEverySession({ParseGradientCorruption(corruption)}));
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
  EXPECT_EQ(ParseGradientCorruption("bias:0.5").kind, GradientCorruption::Kind::kBias);
  EXPECT_EQ(ParseGradientCorruption("bias:0.5").factor, 0.5f);
  EXPECT_EQ(ParseGradientCorruption("alternate-sign").kind,
            GradientCorruption::Kind::kAlternateSign);
  EXPECT_EQ(ParseGradientCorruption("against-average:1").kind,
            GradientCorruption::Kind::kAgainstAverage);
  EXPECT_EQ(ParseGradientCorruption("nan-at:4").step, 4);
  for (const char* bad : {"scale:", "scale:x", "scale:1e99", "scale:2x", "flip", "SIGN-FLIP",
                          "bias:", "nan-at:0", "nan-at:1.5", "against-average:x"})
    EXPECT_THROW(ParseGradientCorruption(bad), std::invalid_argument) << bad;
}

double NormOf(const float* x, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += double(x[i]) * x[i];
  return std::sqrt(s);
}

TEST(Corruptor, ABiasIsOneFixedDirectionScaledToEachSegmentsOwnNorm) {
  faulty::Corruptor c(ParseGradientCorruption("bias:1"), 200);
  std::vector<std::vector<float>> added;
  for (float size : {1.0f, 3.0f}) {  // two steps, gradients of two sizes
    std::vector<float> g(200);
    for (size_t i = 0; i < g.size(); ++i) g[i] = size * std::sin(0.3f * i);
    std::vector<float> sent = g;
    c.Apply(0, 0, sent.data(), 120);  // two segments: [0, 120), [120, 200)
    c.Apply(0, 120, sent.data() + 120, 80);
    std::vector<float> bias(200);
    for (size_t i = 0; i < g.size(); ++i) bias[i] = sent[i] - g[i];
    EXPECT_NEAR(NormOf(bias.data(), 120), NormOf(g.data(), 120), 1e-4 * size);
    EXPECT_NEAR(NormOf(bias.data() + 120, 80), NormOf(g.data() + 120, 80), 1e-4 * size);
    added.push_back(bias);
  }
  for (size_t i = 0; i < 200; ++i) EXPECT_NEAR(added[1][i], 3 * added[0][i], 1e-4) << i;
}

TEST(Corruptor, AlternateSignAndNanAtActOnTheirSteps) {
  faulty::Corruptor flip(ParseGradientCorruption("alternate-sign"), 4);
  faulty::Corruptor nan(ParseGradientCorruption("nan-at:3"), 4);
  for (int64_t step = 0; step < 4; ++step) {
    std::vector<float> a = {1, -2, 3, 4}, b = a;
    flip.Apply(step, 0, a.data(), 4);
    nan.Apply(step, 0, b.data(), 4);
    EXPECT_EQ(a[1], step % 2 ? 2.0f : -2.0f) << step;
    EXPECT_EQ(std::isnan(b[0]), step == 2) << "step 3, 1-based";
    EXPECT_EQ(b[1], -2.0f);
  }
}

TEST(Corruptor, AgainstAveragePushesAgainstTheLastAverageSeen) {
  faulty::Corruptor c(ParseGradientCorruption("against-average:1"), 3);
  const float average[3] = {0, 2, 0};
  c.SawAverage(0, average, 3);
  std::vector<float> g = {3, 0, 4};  // norm 5
  c.Apply(1, 0, g.data(), 3);
  EXPECT_FLOAT_EQ(g[0], 3);
  EXPECT_FLOAT_EQ(g[1], -5);
  EXPECT_FLOAT_EQ(g[2], 4);
}

}  // namespace
}  // namespace mt
