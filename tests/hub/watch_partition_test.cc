// The hostile-worker watches where the workers' data differ by design
// (mthub --partition; issue 45, finding 8): they stay on, and judge each
// worker against the others' spread. Honest workers that all keep their
// own classes' direction, or all point apart, are never refused; a bias
// or a sign flip that stands out from them is.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "hub/round/alignment_watch.h"
#include "hub/round/persistence_watch.h"

namespace mt {
namespace {

std::vector<float> Gaussian(std::mt19937& rng, size_t n) {
  std::normal_distribution<float> normal(0, 1);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

// Steps of three workers' residual sketches: noise, plus each worker's own
// fixed direction (its classes' pull) times pull[i], plus for worker 2 a
// fixed direction times bias. Returns the step of the first refusal and
// who, or {-1, -1}.
std::pair<int, int> RunPersistence(const std::vector<float>& pull, float bias, int steps,
                                   uint32_t seed) {
  std::mt19937 rng(seed);
  const size_t k = PersistenceWatch::kBuckets;
  std::vector<std::vector<float>> own = {Gaussian(rng, k), Gaussian(rng, k), Gaussian(rng, k)};
  const std::vector<float> u = Gaussian(rng, k);
  PersistenceWatch watch;
  const int ids[3] = {0, 1, 2};
  for (int step = 0; step < steps; ++step) {
    watch.BeginStep();
    for (int i = 0; i < 3; ++i) {
      std::vector<float> s = Gaussian(rng, k);
      for (size_t b = 0; b < k; ++b)
        s[b] += pull[static_cast<size_t>(i)] * own[static_cast<size_t>(i)][b] +
                (i == 2 ? bias * u[b] : 0.0f);
      double energy = 0;
      for (float v : s) energy += double(v) * v;
      watch.Add(i, s.data(), energy);
    }
    const int worst = watch.EndStep(ids, 3);
    if (worst >= 0) return {step, worst};
  }
  return {-1, -1};
}

TEST(PersistenceWatchDataDiffer, HonestWorkersEachKeepingTheirClassesDirectionAreNotRefused) {
  // Persistences of about 0.5 each (a pull of the noise's size), and one
  // worker's classes pulling harder than the others'.
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    EXPECT_EQ(RunPersistence({1.0f, 1.0f, 1.0f}, 0, 1000, seed).first, -1) << seed;
    EXPECT_EQ(RunPersistence({0.7f, 1.0f, 1.4f}, 0, 1000, seed).first, -1) << seed;
  }
}

TEST(PersistenceWatchDataDiffer, ABiasBesideThemIsRefused) {
  // Honest pulls of half the noise's size (persistence ~0.2, as measured
  // with LeNet-5 under Dirichlet 0.5) and a bias of 2 on top of one.
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    const auto [step, who] = RunPersistence({0.5f, 0.5f, 0.5f}, 2.0f, 1000, seed);
    EXPECT_EQ(who, 2) << seed;
    EXPECT_LT(step, 100) << seed;
  }
}

// The alignment watch with cosines of mean cosine[i] plus noise of 0.05.
int RunAlignment(const std::vector<double>& cosine, double spread, int steps, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0, 0.05);
  AlignmentWatch watch;
  const int ids[3] = {0, 1, 2};
  for (int step = 0; step < steps; ++step) {
    watch.BeginStep();
    for (int i = 0; i < 3; ++i) watch.Add(i, {cosine[static_cast<size_t>(i)] + noise(rng), 1, 1});
    const int worst = watch.EndStep(ids, 3, spread);
    if (worst >= 0) return worst;
  }
  return -1;
}

TEST(AlignmentWatchDataDiffer, HonestWorkersAllPointingApartAreNotRefused) {
  // Measured with Dirichlet 0.1: honest cosines of -0.4 to -0.6, at most
  // 0.12 below their median. Judged as on shared data, one was refused.
  const std::vector<double> apart = {-0.45, -0.5, -0.6};
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    EXPECT_EQ(RunAlignment(apart, AlignmentWatch::kSpread, 1000, seed), -1) << seed;
    EXPECT_EQ(RunAlignment(apart, 0, 1000, seed), 2) << "without the spread: " << seed;
  }
}

TEST(AlignmentWatchDataDiffer, ASignFlipFurtherApartThanTheyAreIsRefused) {
  // Measured with Dirichlet 0.5: a sign flip at -0.85, honest workers at
  // -0.55 to -0.65 beside it.
  for (uint32_t seed = 1; seed <= 3; ++seed)
    EXPECT_EQ(RunAlignment({-0.6, -0.55, -0.85}, AlignmentWatch::kSpread, 200, seed), 2) << seed;
}

}  // namespace
}  // namespace mt
