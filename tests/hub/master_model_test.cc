// The hub's master copy alone: the update of a local-SGD round, with and
// without outer momentum, exactly as the workers will add it.
#include "hub/aggregation/master_model.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/model/model_spec.h"
#include "hub/aggregation/robust_aggregate.h"

namespace mt {
namespace {

std::unique_ptr<MasterModel> Tiny() {
  const proto::ModelSpec spec =
      ParseModelSpec(R"(name: "tiny" input { channels: 1 height: 1 width: 4 }
                                                 layer { name: "flat" flatten {} }
                                                 layer { name: "fc" dense { units: 3 } })",
                     "test");
  return std::make_unique<MasterModel>(spec, OptimizerConfig{}, 1, 3, 1);
}

// Averages `change` alone (weight 1) into the master's average buffer,
// segment by segment, as the coordinator's reduction does.
void Average(MasterModel& m, const std::vector<float>& change) {
  const float weight = 1.0f;
  for (const wire::Segment& seg : m.segments()) {
    const float* inputs[] = {change.data() + seg.begin};
    WeightedSum(inputs, &weight, 1, seg.size(), m.average() + seg.begin);
  }
}

TEST(MasterModel, ARoundsChangeIsAddedToTheWeights) {
  auto m = Tiny();
  const std::vector<float> start = m->Weights();
  const std::vector<float> change(start.size(), 0.25f);
  Average(*m, change);
  m->ApplyAverageChange();
  const std::vector<float> end = m->Weights();
  for (size_t i = 0; i < end.size(); ++i) EXPECT_FLOAT_EQ(end[i], start[i] + 0.25f) << i;
}

TEST(MasterModel, OuterMomentumCarriesPartOfTheLastUpdateIntoTheNext) {
  auto m = Tiny();
  const std::vector<float> start = m->Weights();
  const size_t n = start.size();
  // v1 = d1 = 1; v2 = 0.5 * 1 + d2 (= 2) = 2.5; v3 = 0.5 * 2.5 + 0 = 1.25.
  const float changes[] = {1.0f, 2.0f, 0.0f};
  const float updates[] = {1.0f, 2.5f, 1.25f};
  float total = 0;
  for (int round = 0; round < 3; ++round) {
    Average(*m, std::vector<float>(n, changes[round]));
    for (size_t k = 0; k < m->segments().size(); ++k) m->ApplyOuterOptimizer(k, 1.0f, 0.5f);
    // What travels to the workers is the update, not the raw average.
    EXPECT_FLOAT_EQ(m->average()[0], updates[round]) << "round " << round;
    m->ApplyAverageChange();
    total += updates[round];
  }
  const std::vector<float> end = m->Weights();
  for (size_t i = 0; i < n; ++i) EXPECT_FLOAT_EQ(end[i], start[i] + total) << i;
}

TEST(MasterModel, OuterLearningRateScalesWhatTravelsAndIsApplied) {
  auto m = Tiny();
  const std::vector<float> start = m->Weights();
  const size_t n = start.size();
  Average(*m, std::vector<float>(n, 1.0f));
  for (size_t k = 0; k < m->segments().size(); ++k) m->ApplyOuterOptimizer(k, 0.5f, 0.0f);
  EXPECT_FLOAT_EQ(m->average()[n - 1], 0.5f);
  m->ApplyAverageChange();
  const std::vector<float> end = m->Weights();
  for (size_t i = 0; i < n; ++i) EXPECT_FLOAT_EQ(end[i], start[i] + 0.5f) << i;
}

}  // namespace
}  // namespace mt
