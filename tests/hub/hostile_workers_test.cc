// One hostile worker of three, in-process (tests/hub/fake_workers.h): with
// the hub's defaults (--aggregate auto) a x1e4 or FLT_MAX gradient is
// refused at once and a sign flip once its gradients have kept pointing
// against the others'; each time the worker is named, dropped and told
// why, and the run goes on to weights near those of a clean run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "hub/round/alignment_watch.h"
#include "tests/hub/fake_workers.h"

namespace mt {
namespace {

using test_support::Fault;
using test_support::InProcessHub;
using test_support::RunResult;
using test_support::RunWith;
using ::testing::HasSubstr;

constexpr int64_t kSteps = 40;

double Distance(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
  return std::sqrt(s);
}

// How far the clean run moved the weights, and how far a run with `faults`
// ends from it.
struct Moved {
  double clean = 0, off = 0;
};

// Fixed batches in both runs: balanced ones follow measured timings, and a
// busy machine would then move the two runs apart by more than any rule.
Moved Compare(const std::vector<Fault>& faults, RunResult* hostile, InProcessHub* hub) {
  InProcessHub clean(3, kSteps);
  for (InProcessHub* h : {&clean, hub}) {
    h->config.batch_policy = BatchPolicy::kFixed;
    h->Rebuild();
  }
  const std::vector<float> start = clean.coordinator->MasterWeights();
  RunResult c = RunWith(clean, {Fault{}, Fault{}, Fault{}});
  *hostile = RunWith(*hub, faults);
  return {Distance(c.weights, start), Distance(hostile->weights, c.weights)};
}

class OneHostileWorker : public ::testing::TestWithParam<Fault::Kind> {};

TEST_P(OneHostileWorker, IsDroppedAndTheRunEndsNearACleanOne) {
  InProcessHub hub(3, kSteps);
  RunResult r;
  const Moved m = Compare({Fault{}, Fault{}, Fault{GetParam(), -1}}, &r, &hub);
  EXPECT_EQ(r.steps, kSteps) << "the run goes on without it";
  for (float w : r.weights) ASSERT_TRUE(std::isfinite(w));
  const auto dropped = hub.events.Of(HubEvent::Kind::kWorkerDropped);
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(dropped[0].worker, r.workers[2]->id()) << "the hostile one, named";
  EXPECT_TRUE(r.workers[2]->got_stop) << "told it is refused";
  EXPECT_EQ(hub.metrics.refused_contributions, 1);
  if (GetParam() == Fault::Kind::kSignFlip) {
    EXPECT_THAT(dropped[0].detail, HasSubstr("point against the other workers'"));
    // Refused once it had kept disagreeing (at its step's last segment,
    // here the only one: reduced again without it).
    EXPECT_GE(dropped[0].step, AlignmentWatch::kMinSteps - 1);
    EXPECT_EQ(hub.metrics.steps_refused, 0);
  } else {
    EXPECT_THAT(dropped[0].detail, HasSubstr("times the median norm"));
    EXPECT_EQ(dropped[0].step, 0) << "refused at its first gradient";
  }
  for (int i = 0; i < 2; ++i) EXPECT_TRUE(r.workers[i]->got_stop && r.workers[i]->refusal.empty());
  // Within a tenth of what a clean run moves the weights (a sign flip
  // with a plain mean would be at about two thirds).
  EXPECT_LT(m.off, 0.1 * m.clean) << "clean run moved " << m.clean;
}

INSTANTIATE_TEST_SUITE_P(Attacks, OneHostileWorker,
                         ::testing::Values(Fault::Kind::kSignFlip, Fault::Kind::kScale1e4,
                                           Fault::Kind::kFltMax));

TEST(HostileWorkers, APlainMeanStillRefusesAnExplodingGradient) {
  InProcessHub hub(3, 10);
  hub.config.aggregate = Aggregation::kMean;
  hub.Rebuild();
  RunResult r = RunWith(hub, {Fault{}, Fault{}, Fault{Fault::Kind::kFltMax, 4}});
  EXPECT_EQ(r.steps, 10);
  EXPECT_EQ(hub.events.Count(HubEvent::Kind::kWorkerDropped, r.workers[2]->id()), 1);
  for (float w : r.weights) ASSERT_TRUE(std::isfinite(w));
}

TEST(HostileWorkers, AHonestRunDropsNobody) {
  InProcessHub hub(3, 60);
  RunResult r = RunWith(hub, {Fault{}, Fault{}, Fault{}});
  EXPECT_EQ(r.steps, 60);
  EXPECT_EQ(hub.events.Count(HubEvent::Kind::kWorkerDropped), 0);
  EXPECT_EQ(hub.metrics.refused_contributions, 0);
}

}  // namespace
}  // namespace mt
