// The round's reduction on its own (hub/round/segment_reducer.h), over
// plain float vectors with no messages, threads or coordinator: segments
// combined in travel order only once every contribution holds them, batch
// weights, refusals before and after a segment went out, and the alignment
// watch that refuses a worker pulling against the others.
#include "hub/round/segment_reducer.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <random>
#include <vector>

#include "hub/round/alignment_watch.h"

namespace mt {
namespace {

// Two segments in travel order: the last layer [4, 10) first, then [0, 4).
std::vector<SegmentRange> TwoSegments() { return {{4, 10}, {0, 4}}; }

struct Worker {
  int id;
  std::vector<float> values;
  int64_t batch;
  size_t in = 0;  // segments arrived
  Contribution Now() const { return {id, values.data(), batch, in}; }
};

void Feed(SegmentReducer& r, const std::vector<Worker>& workers) {
  r.ClearInputs();
  for (const Worker& w : workers) r.AddInput(w.Now());
}

TEST(SegmentReducer, CombinesEachSegmentOnceEveryContributionHoldsItWeightedByBatch) {
  SegmentReducer r(TwoSegments(), AggregatorOptions{Aggregation::kMean});
  std::vector<Worker> w = {{0, std::vector<float>(10, 1.0f), 1},
                           {1, std::vector<float>(10, 5.0f), 3}};
  r.Begin(0, false, w.size());
  std::vector<float> out(10, -1.0f);

  w[0].in = 1;  // only one has its first segment
  Feed(r, w);
  EXPECT_FALSE(r.Ready());
  w[1].in = 2;
  Feed(r, w);
  ASSERT_TRUE(r.Ready());
  EXPECT_EQ(r.reduced(), 0u);
  ASSERT_TRUE(r.Combine(out.data()).ok());
  ASSERT_TRUE(r.CheckAlignment().ok());
  r.Commit();
  // (1 * 1 + 3 * 5) / 4 over the first segment only.
  for (size_t j = 4; j < 10; ++j) EXPECT_FLOAT_EQ(out[j], 4.0f) << j;
  for (size_t j = 0; j < 4; ++j) EXPECT_EQ(out[j], -1.0f) << j;

  Feed(r, w);
  EXPECT_FALSE(r.Ready());  // worker 0 has not sent its second segment
  EXPECT_TRUE(r.last_segment());
  w[0].in = 2;
  Feed(r, w);
  ASSERT_TRUE(r.Ready());
  ASSERT_TRUE(r.Combine(out.data()).ok());
  r.Commit();
  EXPECT_TRUE(r.done());
  for (size_t j = 0; j < 4; ++j) EXPECT_FLOAT_EQ(out[j], 4.0f) << j;
  Feed(r, w);
  EXPECT_FALSE(r.Ready());  // nothing left to combine

  // A new step starts from the first segment again.
  r.Begin(1, false, w.size());
  EXPECT_EQ(r.reduced(), 0u);
  EXPECT_FALSE(r.done());
}

TEST(SegmentReducer, NoInputsIsNeverReady) {
  SegmentReducer r(TwoSegments(), {});
  r.Begin(0, false, 0);
  r.ClearInputs();
  EXPECT_FALSE(r.Ready());
}

std::vector<Worker> ThreeWithOneHuge(float huge) {
  std::vector<Worker> w;
  for (int i = 0; i < 3; ++i) w.push_back({i, std::vector<float>(10, 1.0f + 0.01f * i), 1, 2});
  for (float& x : w[1].values) x *= huge;
  return w;
}

TEST(SegmentReducer, RefusesAFarOutlierAndSaysWhyInTheStepsTerms) {
  SegmentReducer r(TwoSegments(), AggregatorOptions{Aggregation::kAuto});
  const std::vector<Worker> w = ThreeWithOneHuge(1e6f);
  r.Begin(6, /*local=*/true, w.size());
  Feed(r, w);
  std::vector<float> out(10, -1.0f);
  const SegmentReducer::Verdict v = r.Combine(out.data());
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.refused, 1);
  EXPECT_NE(v.why.find("weight change for step 7"), std::string::npos) << v.why;
  EXPECT_NE(v.why.find("times the median norm"), std::string::npos) << v.why;
  for (size_t j = 4; j < 10; ++j) EXPECT_EQ(out[j], -1.0f) << "a refusal leaves the output alone";
  // Nothing went out yet: the segment is simply combined again without it.
  EXPECT_FALSE(r.Refused());
  EXPECT_FALSE(r.step_refused());
}

TEST(SegmentReducer, ARefusalAfterASegmentWentOutRunsTheStepAgain) {
  SegmentReducer r(TwoSegments(), AggregatorOptions{Aggregation::kAuto});
  std::vector<Worker> w = ThreeWithOneHuge(1.0f);
  r.Begin(0, false, w.size());
  Feed(r, w);
  std::vector<float> out(10);
  ASSERT_TRUE(r.Combine(out.data()).ok());
  r.Commit();
  for (size_t j = 0; j < 4; ++j) w[2].values[j] = 1e7f;  // the second segment goes bad
  Feed(r, w);
  const SegmentReducer::Verdict v = r.Combine(out.data());
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.refused, 2);
  EXPECT_NE(v.why.find("gradient for step 1"), std::string::npos) << v.why;
  EXPECT_TRUE(r.Refused());
  EXPECT_TRUE(r.step_refused());
  Feed(r, w);
  EXPECT_FALSE(r.Ready()) << "a refused step combines nothing more";
  r.ClearRefused();
  r.Begin(0, false, w.size());
  EXPECT_FALSE(r.step_refused());
}

TEST(SegmentReducer, BlamesTheLargestForANonFiniteCombination) {
  // Two inputs (no majority to refuse by norm) whose mean is not finite:
  // the inboxes refuse non-finite values, so here an infinite input stands
  // for finite ones whose combination overflows.
  SegmentReducer r({{0, 4}}, AggregatorOptions{Aggregation::kMean});
  std::vector<Worker> w = {{3, std::vector<float>(4, FLT_MAX), 1, 1},
                           {7, std::vector<float>(4, INFINITY), 2, 1}};
  r.Begin(0, false, w.size());
  Feed(r, w);
  std::vector<float> out(4);
  const SegmentReducer::Verdict v = r.Combine(out.data());
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.refused, 1);
  EXPECT_EQ(r.Largest(), 1);
  EXPECT_NE(v.why.find("not finite"), std::string::npos) << v.why;
}

TEST(SegmentReducer, RefusesASignFlipperOnlyAfterTheWatchHasSeenEnoughSteps) {
  SegmentReducer r(TwoSegments(), AggregatorOptions{Aggregation::kAuto});
  std::mt19937 rng(5);
  std::normal_distribution<float> n(0, 1);
  int refused_at = -1;
  for (int step = 0; step < 3 * AlignmentWatch::kMinSteps && refused_at < 0; ++step) {
    std::vector<float> g(10);
    for (float& x : g) x = n(rng);
    std::vector<Worker> w;
    for (int i = 0; i < 3; ++i) {
      std::vector<float> v(10);
      for (size_t j = 0; j < 10; ++j) v[j] = (i == 2 ? -g[j] : g[j]) + 0.1f * n(rng);
      w.push_back({i, v, 1, 2});
    }
    r.Begin(step, false, w.size());
    std::vector<float> out(10);
    while (!r.done()) {
      Feed(r, w);
      ASSERT_TRUE(r.Ready());
      ASSERT_TRUE(r.Combine(out.data()).ok());
      const SegmentReducer::Verdict v = r.CheckAlignment();
      if (!v.ok()) {
        EXPECT_TRUE(r.last_segment()) << "judged over the whole step";
        EXPECT_EQ(v.refused, 2);
        EXPECT_NE(v.why.find("point against the other workers"), std::string::npos) << v.why;
        refused_at = step;
        break;
      }
      r.Commit();
    }
  }
  EXPECT_EQ(refused_at, AlignmentWatch::kMinSteps - 1);
  EXPECT_LT(r.alignment(2), -AlignmentWatch::kBound);
  EXPECT_GT(r.alignment(0), -AlignmentWatch::kBound);
}

TEST(AlignmentWatch, SmoothsEachWorkersCosineOverSteps) {
  AlignmentWatch watch;
  const int ids[] = {0, 4};
  watch.BeginStep();
  watch.Add(0, {1.0, 1.0, 1.0});   // cosine 1
  watch.Add(4, {-1.0, 1.0, 4.0});  // cosine -0.5
  EXPECT_EQ(watch.EndStep(ids, 2), -1);
  EXPECT_DOUBLE_EQ(watch.cosine(0), 1.0);
  EXPECT_DOUBLE_EQ(watch.cosine(4), -0.5);
  EXPECT_DOUBLE_EQ(watch.cosine(2), 0.0) << "a worker never seen";
  watch.BeginStep();  // this step's sums start again
  watch.Add(0, {0.0, 1.0, 1.0});
  watch.Add(4, {0.0, 1.0, 1.0});
  EXPECT_EQ(watch.EndStep(ids, 2), -1);
  EXPECT_DOUBLE_EQ(watch.cosine(0), 1.0 - AlignmentWatch::kSmoothing);
  EXPECT_DOUBLE_EQ(watch.cosine(4), -0.5 * (1.0 - AlignmentWatch::kSmoothing));
}

}  // namespace
}  // namespace mt
