// The aggregation math on its own (hub/aggregation/robust_aggregate.h): each rule on
// small hand-checked inputs, and one hostile input of three (sign flip,
// x1e4, FLT_MAX) against the honest pair.
#include "hub/aggregation/robust_aggregate.h"

#include <gtest/gtest.h>

#include <cstdint>

#include <algorithm>

#include <cfloat>
#include <cmath>
#include <random>
#include <vector>

namespace mt {
namespace {

struct Inputs {
  std::vector<std::vector<float>> values;
  std::vector<float> weights;
  std::vector<const float*> Pointers() const {
    std::vector<const float*> p;
    for (const auto& v : values) p.push_back(v.data());
    return p;
  }
};

std::vector<float> Combine(RobustAggregator& agg, const Inputs& in,
                           RobustAggregator::Outcome* o = nullptr) {
  const size_t count = in.values[0].size();
  std::vector<float> out(count, -123.0f);
  const std::vector<const float*> p = in.Pointers();
  const RobustAggregator::Outcome r =
      agg.Aggregate(p.data(), in.weights.data(), in.values.size(), count, out.data());
  if (o) *o = r;
  return out;
}

double Distance(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
  return std::sqrt(s);
}

// An honest gradient g plus per-worker noise, as from IID batches.
Inputs Honest(size_t workers, size_t count, double noise, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0, 1);
  std::vector<float> g(count);
  for (auto& x : g) x = n(rng);
  Inputs in;
  for (size_t i = 0; i < workers; ++i) {
    std::vector<float> v(count);
    for (size_t j = 0; j < count; ++j) v[j] = g[j] + static_cast<float>(noise) * n(rng);
    in.values.push_back(v);
    in.weights.push_back(1.0f / static_cast<float>(workers));
  }
  return in;
}

TEST(RobustAggregate, LowerMedianAndNorm) {
  std::vector<double> v{5, 1, 4, 2};
  EXPECT_EQ(LowerMedian(v.data(), 4), 2);
  std::vector<double> w{3, 9, 1};
  EXPECT_EQ(LowerMedian(w.data(), 3), 3);
  const float big[2] = {FLT_MAX, FLT_MAX};
  EXPECT_TRUE(std::isfinite(L2Norm(big, 2))) << "summed in double";
  const float x[2] = {3, 4};
  EXPECT_DOUBLE_EQ(L2Norm(x, 2), 5);
}

TEST(RobustAggregate, CoordinateStatistics) {
  const std::vector<float> a{1, 10, -3, 0}, b{2, -10, 5, 0}, c{100, 0, 4, 0}, d{-7, 1, 1, 1};
  const float* x3[3] = {a.data(), b.data(), c.data()};
  float scratch[8], out[4];
  CoordinateTrimmedMean(x3, nullptr, 3, 1, 4, scratch, out);
  EXPECT_EQ(std::vector<float>(out, out + 4), (std::vector<float>{2, 0, 4, 0}));
  const float* x4[4] = {a.data(), b.data(), c.data(), d.data()};
  CoordinateTrimmedMean(x4, nullptr, 4, 1, 4, scratch, out);  // the mean of the middle two
  EXPECT_EQ(std::vector<float>(out, out + 4), (std::vector<float>{1.5f, 0.5f, 2.5f, 0}));
  const float w[3] = {0.5f, 0.25f, 0.25f};
  WeightedSum(x3, w, 3, 4, out);
  EXPECT_FLOAT_EQ(out[0], 0.5f + 0.5f + 25);
  EXPECT_EQ(TrimOf(2), 0u);
  EXPECT_EQ(TrimOf(3), 1u);
  EXPECT_EQ(TrimOf(9), 2u);
}

TEST(RobustAggregate, CoordinateStatisticsOfManyWorkersMatchAFullSort) {
  // Beyond 16 inputs the middle is found by selection, not a sort: the
  // same values must come out, for every trim and for odd and even counts.
  for (size_t n : {17u, 64u, 65u}) {
    std::vector<std::vector<float>> inputs(n, std::vector<float>(8));
    uint32_t state = 12345;
    for (auto& in : inputs)
      for (auto& v : in) {
        state = state * 1664525u + 1013904223u;
        v = static_cast<float>(static_cast<int>(state >> 20) - 2048) / 64.0f;
      }
    std::vector<const float*> x;
    for (const auto& in : inputs) x.push_back(in.data());
    std::vector<float> scratch(n), out(8);
    for (size_t trim : {size_t{1}, (n - 1) / 4, (n - 1) / 2}) {
      CoordinateTrimmedMean(x.data(), nullptr, n, trim, 8, scratch.data(), out.data());
      for (size_t j = 0; j < 8; ++j) {
        std::vector<float> column;
        for (const auto& in : inputs) column.push_back(in[j]);
        std::sort(column.begin(), column.end());
        double sum = 0;
        for (size_t i = trim; i < n - trim; ++i) sum += column[i];
        EXPECT_NEAR(out[j], sum / static_cast<double>(n - 2 * trim), 1e-5)
            << "n " << n << ", trim " << trim << ", coordinate " << j;
      }
    }
  }
}

TEST(RobustAggregate, MeanIsTheBatchWeightedMean) {
  RobustAggregator agg({Aggregation::kMean});
  Inputs in{{{1, 2}, {3, 6}}, {0.25f, 0.75f}};
  EXPECT_EQ(Combine(agg, in), (std::vector<float>{2.5f, 5}));
}

TEST(RobustAggregate, AutoIsTheWeightedMeanWhileNobodyStrays) {
  RobustAggregator agg;
  Inputs in = Honest(3, 1000, 0.2, 1);
  in.weights = {0.25f, 0.5f, 0.25f};
  std::vector<float> mean(1000);
  const auto p = in.Pointers();
  WeightedSum(p.data(), in.weights.data(), 3, 1000, mean.data());
  const std::vector<float> out = Combine(agg, in);
  for (size_t j = 0; j < out.size(); ++j) EXPECT_NEAR(out[j], mean[j], 1e-5) << j;
  for (size_t i = 0; i < 3; ++i) EXPECT_FALSE(agg.clipped(i));
}

// The honest pair's mean, and the distance between the pair: how far any
// rule may land from the former is a small multiple of the latter.
struct Reference {
  std::vector<float> mean;
  double spread;
};
Reference HonestPair(const Inputs& in) {
  Reference r{std::vector<float>(in.values[0].size()), Distance(in.values[0], in.values[1])};
  for (size_t j = 0; j < r.mean.size(); ++j) r.mean[j] = 0.5f * (in.values[0][j] + in.values[1][j]);
  return r;
}

class OneHostileOfThree : public ::testing::TestWithParam<const char*> {};

TEST_P(OneHostileOfThree, StaysNearTheHonestPairUnderEveryRule) {
  const std::string attack = GetParam();
  for (Aggregation mode : {Aggregation::kAuto, Aggregation::kMedian, Aggregation::kTrimmedMean}) {
    Inputs in = Honest(3, 4000, 0.5, 7);
    std::vector<float>& bad = in.values[2];
    for (float& v : bad)
      v = attack == "sign-flip" ? -v : attack == "x1e4" ? 1e4f * v : (v < 0 ? -FLT_MAX : FLT_MAX);
    RobustAggregator agg({mode});
    RobustAggregator::Outcome o;
    const std::vector<float> out = Combine(agg, in, &o);
    const Reference ref = HonestPair(in);
    if (attack == "sign-flip") {
      EXPECT_EQ(o.refused, -1);
      EXPECT_TRUE(o.finite);
      // A plain mean lands at g/3: a distance of about |g| * 2/3 from the pair.
      EXPECT_LT(Distance(out, ref.mean), ref.spread) << AggregationName(mode);
    } else {
      EXPECT_EQ(o.refused, 2) << "beyond 100 times the median norm: refused";
      EXPECT_GT(o.ratio, 100);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Attacks, OneHostileOfThree,
                         ::testing::Values("sign-flip", "x1e4", "flt-max"));

TEST(RobustAggregate, AutoClipsAScaledWorkerBelowTheRefusalBound) {
  RobustAggregator agg;
  Inputs in = Honest(3, 2000, 0.3, 3);
  for (float& v : in.values[1]) v *= 50;  // within the bound of 100: clipped, not refused
  RobustAggregator::Outcome o;
  const std::vector<float> out = Combine(agg, in, &o);
  EXPECT_EQ(o.refused, -1);
  EXPECT_TRUE(agg.clipped(1));
  EXPECT_FALSE(agg.clipped(0));
  Inputs pair{{in.values[0], in.values[2]}, {0.5f, 0.5f}};
  const Reference ref = HonestPair(pair);
  EXPECT_LT(Distance(out, ref.mean), ref.spread);
}

TEST(RobustAggregate, TwoWorkersAreClippedButNeverRefused) {
  RobustAggregator agg;
  Inputs in{{{1, 0}, {1e4f, 0}}, {0.5f, 0.5f}};
  RobustAggregator::Outcome o;
  const std::vector<float> out = Combine(agg, in, &o);
  EXPECT_EQ(o.refused, -1) << "no majority says which one is wrong";
  EXPECT_TRUE(agg.clipped(1));
  EXPECT_FLOAT_EQ(out[0], 0.5f * 1 + 0.5f * 2);  // clipped to twice the smaller norm
  RobustAggregator mean({Aggregation::kMean});
  EXPECT_FLOAT_EQ(Combine(mean, in)[0], 5000.5f);
}

TEST(RobustAggregate, OneWorkerPassesThrough) {
  RobustAggregator agg;
  Inputs in{{{1, -2, 3}}, {1.0f}};
  EXPECT_EQ(Combine(agg, in), (std::vector<float>{1, -2, 3}));
}

TEST(RobustAggregate, ANonFiniteResultIsReported) {
  RobustAggregator agg({Aggregation::kMean});
  Inputs in{{{FLT_MAX}, {FLT_MAX}}, {1.0f, 1.0f}};  // weights that do not sum to 1 overflow
  RobustAggregator::Outcome o;
  Combine(agg, in, &o);
  EXPECT_FALSE(o.finite);
}

}  // namespace
}  // namespace mt
