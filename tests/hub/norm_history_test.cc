// The refusal for size against each worker's own history
// (hub/round/norm_history.h, issue 45 finding 8): a worker whose
// gradients grew step by step far beyond the median (an honest one whose
// classes the others pull apart, under --partition) is not refused; a
// jump from its own usual norm, or a huge first contribution, still is.
#include "hub/round/norm_history.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "hub/round/segment_reducer.h"

namespace mt {
namespace {

// Steps of three workers over one segment of 64 floats: noise of norm ~1
// times scale[i] for worker i. Returns the verdict of the step.
SegmentReducer::Verdict Step(SegmentReducer& r, int64_t step, const std::vector<double>& scale,
                             std::mt19937& rng) {
  std::normal_distribution<float> normal(0, 0.125f);
  std::vector<std::vector<float>> g(scale.size(), std::vector<float>(64));
  r.Begin(step, false, scale.size());
  r.ClearInputs();
  for (size_t i = 0; i < scale.size(); ++i) {
    for (float& x : g[i]) x = static_cast<float>(scale[i]) * normal(rng);
    r.AddInput({static_cast<int>(i), g[i].data(), 1, 1});
  }
  std::vector<float> out(64);
  SegmentReducer::Verdict v = r.Combine(out.data());
  if (v.ok()) r.Commit();
  return v;
}

AggregatorOptions WatchesOff() {
  AggregatorOptions o;
  o.refuse_misaligned = false;
  o.sketch_residuals = false;
  return o;
}

TEST(NormHistory, KeepsARunningMeanPerWorkerAndSegment) {
  NormHistory h(2);
  EXPECT_EQ(h.usual(3, 1), 0.0) << "none yet";
  h.Observe(3, 1, 10);
  EXPECT_EQ(h.usual(3, 1), 10.0) << "the first norm as it is";
  h.Observe(3, 1, 20);
  EXPECT_DOUBLE_EQ(h.usual(3, 1), 0.9 * 10 + 0.1 * 20);
  EXPECT_EQ(h.usual(3, 0), 0.0);
  EXPECT_EQ(h.usual(2, 1), 0.0);
}

TEST(NormHistory, AWorkerWhoseNormGrewStepByStepBeyondTheMedianIsNotRefused) {
  // Before: refused once past 100 times the median, as an honest worker
  // was under --partition at 1,500 steps ("134 times the median norm").
  SegmentReducer r({{0, 64}}, WatchesOff());
  std::mt19937 rng(1);
  double grow = 1;
  for (int64_t step = 0; step < 60; ++step, grow *= 1.15) {
    const SegmentReducer::Verdict v = Step(r, step, {1, 1, grow}, rng);
    ASSERT_TRUE(v.ok()) << "step " << step << ": " << v.why;
  }
  EXPECT_GT(grow, 1000) << "far beyond 100 times the median";
}

TEST(NormHistory, AJumpFromItsOwnUsualNormIsRefused) {
  SegmentReducer r({{0, 64}}, WatchesOff());
  std::mt19937 rng(2);
  for (int64_t step = 0; step < 20; ++step) ASSERT_TRUE(Step(r, step, {1, 1, 1}, rng).ok());
  const SegmentReducer::Verdict v = Step(r, 20, {1, 1e4, 1}, rng);
  EXPECT_EQ(v.refused, 1);
  EXPECT_NE(v.why.find("times the median norm"), std::string::npos) << v.why;
}

TEST(NormHistory, AHugeFirstContributionIsRefusedAtOnce) {
  SegmentReducer r({{0, 64}}, WatchesOff());
  std::mt19937 rng(3);
  EXPECT_EQ(Step(r, 0, {1, 1, 1e4}, rng).refused, 2);
}

}  // namespace
}  // namespace mt
