// The persistence watch (hub/round/persistence_watch.h) and the residual
// sketches it reads (hub/aggregation/robust_aggregate.h): a worker that adds the same
// vector to every contribution, even one no larger than its gradient, is
// told from honest noise and refused; honest noise over many steps never is.
#include "hub/round/persistence_watch.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "hub/aggregation/robust_aggregate.h"
#include "hub/round/segment_reducer.h"

namespace mt {
namespace {

std::vector<float> Gaussian(std::mt19937& rng, size_t n, float sigma = 1) {
  std::normal_distribution<float> normal(0, sigma);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

TEST(ResidualSketch, EstimatesTheResidualsNormAndSumsOverSegments) {
  // Three inputs; the sketch of the third's residual over two segments,
  // summed, has about the squared norm of the whole residual.
  std::mt19937 rng(1);
  const size_t count = 20000, half = count / 2;
  std::vector<std::vector<float>> x = {Gaussian(rng, count), Gaussian(rng, count),
                                       Gaussian(rng, count)};
  RobustAggregator agg;
  std::vector<float> out(count), total(RobustAggregator::kSketchSize, 0.0f);
  double energy = 0, residual_sq = 0;
  for (size_t begin : {size_t{0}, half}) {
    const float* in[3] = {x[0].data() + begin, x[1].data() + begin, x[2].data() + begin};
    const float w[3] = {1.0f / 3, 1.0f / 3, 1.0f / 3};
    ASSERT_EQ(agg.Aggregate(in, w, 3, half, out.data() + begin, begin).refused, -1);
    ASSERT_TRUE(agg.sketched());
    for (size_t b = 0; b < total.size(); ++b) total[b] += agg.sketch(2)[b];
    energy += agg.residual_energy(2);
    // The centre is the coordinate-wise median (all three within the radius
    // or not, the residual is measured from the median).
    for (size_t j = 0; j < half; ++j) {
      const float a = in[0][j], b = in[1][j], c = in[2][j];
      const float m = std::max(std::min(a, b), std::min(std::max(a, b), c));
      residual_sq += double(c - m) * (c - m);
    }
  }
  double sketch_sq = 0;
  for (float v : total) sketch_sq += double(v) * v;
  EXPECT_NEAR(energy, residual_sq, 1e-3 * residual_sq);
  EXPECT_NEAR(sketch_sq / energy, 1.0, 0.2) << "a count sketch keeps the norm, roughly";
}

TEST(ResidualSketch, IsOffWhereTheDataDiffer) {
  AggregatorOptions o;
  o.sketch_residuals = false;
  RobustAggregator agg(o);
  const std::vector<float> a(8, 1.0f), b(8, 2.0f), c(8, 3.0f);
  const float* in[3] = {a.data(), b.data(), c.data()};
  const float w[3] = {1.0f / 3, 1.0f / 3, 1.0f / 3};
  std::vector<float> out(8);
  agg.Aggregate(in, w, 3, 8, out.data());
  EXPECT_FALSE(agg.sketched());
  EXPECT_DOUBLE_EQ(agg.residual_energy(2), 8.0) << "distances still measured";
}

// Feeds `steps` steps of residual sketches: noise for every worker, plus
// `bias` times a fixed direction of the noise's norm for worker 2.
int StepsUntilRefused(PersistenceWatch& watch, int steps, float bias, uint32_t seed) {
  std::mt19937 rng(seed);
  const size_t k = PersistenceWatch::kBuckets;
  const std::vector<float> direction = Gaussian(rng, k, 1.0f);  // |u| ~ sqrt(k)
  const int ids[3] = {0, 1, 2};
  for (int step = 0; step < steps; ++step) {
    watch.BeginStep();
    for (int id : ids) {
      std::vector<float> s = Gaussian(rng, k);
      if (id == 2)
        for (size_t b = 0; b < k; ++b) s[b] += bias * direction[b];
      double energy = 0;
      for (float v : s) energy += double(v) * v;
      watch.Add(id, s.data(), energy);
    }
    const int worst = watch.EndStep(ids, 3);
    if (worst >= 0) {
      EXPECT_EQ(worst, 2) << "only the biased one";
      return step;
    }
  }
  return -1;
}

TEST(PersistenceWatch, RefusesAConstantBiasOfTheNoisesSizeAfterItsMinimumSteps) {
  PersistenceWatch watch;
  const int at = StepsUntilRefused(watch, 200, 1.0f, 3);
  EXPECT_EQ(at, PersistenceWatch::kMinSteps - 1);
  EXPECT_GT(watch.persistence(2), 0.3);
  EXPECT_LT(watch.persistence(0), PersistenceWatch::kBound);
}

TEST(PersistenceWatch, RefusesHalfThatBiasToo) {
  PersistenceWatch watch;
  const int at = StepsUntilRefused(watch, 200, 0.5f, 4);
  EXPECT_GE(at, PersistenceWatch::kMinSteps - 1);
  EXPECT_LT(at, 100);
}

TEST(PersistenceWatch, NeverRefusesNoiseAndItsPersistenceStaysNearTheFloor) {
  for (uint32_t seed = 10; seed < 15; ++seed) {
    PersistenceWatch watch;
    EXPECT_EQ(StepsUntilRefused(watch, 2000, 0.0f, seed), -1) << seed;
    const double floor = PersistenceWatch::kSmoothing / (2 - PersistenceWatch::kSmoothing);
    for (int id = 0; id < 3; ++id) {
      EXPECT_LT(watch.persistence(id), 3 * floor) << seed;
      EXPECT_LT(watch.peak(id), PersistenceWatch::kBound) << seed;
    }
  }
}

TEST(SegmentReducer, RefusesAWorkerThatAddsAConstantVectorOfItsGradientsNorm) {
  // Gradients of a fixed mean plus noise of twice its size; worker 2 adds
  // a fixed random direction scaled to its own gradient's norm: inside
  // the clip radius, and no sign flip for the alignment watch to see.
  const size_t count = 4000;
  SegmentReducer r({{2000, 4000}, {0, 2000}}, AggregatorOptions{});
  std::mt19937 rng(7);
  const std::vector<float> mean = Gaussian(rng, count, 0.5f);
  std::vector<float> u = Gaussian(rng, count);
  const double u_norm = L2Norm(u.data(), count);
  int refused_at = -1;
  std::vector<float> out(count);
  for (int step = 0; step < 200 && refused_at < 0; ++step) {
    std::vector<std::vector<float>> g(3);
    for (int i = 0; i < 3; ++i) {
      g[i] = Gaussian(rng, count);
      for (size_t j = 0; j < count; ++j) g[i][j] += mean[j];
    }
    const double norm = L2Norm(g[2].data(), count);
    for (size_t j = 0; j < count; ++j) g[2][j] += static_cast<float>(norm / u_norm) * u[j];
    r.Begin(step, false, 3);
    while (!r.done()) {
      r.ClearInputs();
      for (int i = 0; i < 3; ++i) r.AddInput({i, g[i].data(), 1, 2});
      ASSERT_TRUE(r.Ready());
      ASSERT_TRUE(r.Combine(out.data()).ok());
      const SegmentReducer::Verdict v = r.CheckAlignment();
      if (!v.ok()) {
        EXPECT_TRUE(r.last_segment());
        EXPECT_EQ(v.refused, 2);
        EXPECT_NE(v.why.find("keep adding the same direction"), std::string::npos) << v.why;
        refused_at = step;
        break;
      }
      r.Commit();
    }
  }
  EXPECT_GE(refused_at, PersistenceWatch::kMinSteps - 1);
  EXPECT_LT(refused_at, PersistenceWatch::kMinSteps + 20);
  EXPECT_LT(r.persistence_peak(0), PersistenceWatch::kBound);
  EXPECT_LT(r.persistence_peak(1), PersistenceWatch::kBound);
}

}  // namespace
}  // namespace mt
