// The step coordinator with faulty fake workers (tests/hub/fake_workers.h):
// a worker that drops, leaves mid-step, is late, rejoins or sends
// non-finite values, and a model that diverges.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hub/membership/quarantine.h"
#include "tests/hub/fake_workers.h"

namespace mt {
namespace {

using test_support::FakeWorker;
using test_support::Fault;
using test_support::InProcessHub;
using test_support::RunResult;
using test_support::RunWith;
using ::testing::HasSubstr;

TEST(CoordinatorFaults, AWorkerThatDropsLeavesTheRunToTheOthers) {
  InProcessHub hub(3, 10);
  RunResult r = RunWith(hub, {Fault{}, Fault{Fault::Kind::kDrop, 4}, Fault{}});
  EXPECT_EQ(r.steps, 10);
  EXPECT_EQ(hub.events.Count(HubEvent::Kind::kWorkerDropped, r.workers[1]->id()), 1);
  EXPECT_EQ(r.workers[1]->steps, 4);
  EXPECT_EQ(r.workers[0]->steps, 10);
  // Step 4 is averaged over the survivors' samples alone; from step 5 on
  // they share the whole global batch.
  EXPECT_LT(hub.metrics.samples, 10 * 36);
  EXPECT_GT(hub.metrics.samples, 9 * 36);
}

TEST(CoordinatorFaults, AGradientStillInFlightWhenItsWorkerLeavesIsIgnored) {
  InProcessHub hub(2, 8);
  RunResult r = RunWith(hub, {Fault{}, Fault{Fault::Kind::kLeaveMidStep, 3}});
  EXPECT_EQ(r.steps, 8);
  const int leaver = r.workers[1]->id();
  EXPECT_EQ(r.workers[1]->refusal, "");
  EXPECT_EQ(hub.events.Count(HubEvent::Kind::kWorkerLeft, leaver), 1);
  EXPECT_EQ(hub.events.Count(HubEvent::Kind::kWorkerDropped, leaver), 0);
  EXPECT_EQ(r.workers[1]->steps, 3);
}

TEST(CoordinatorFaults, ALateWorkerIsLeftOutThenComesBackWithTheFullState) {
  InProcessHub hub(2, 8, /*deadline_s=*/0.5, /*min_workers=*/2);
  RunResult r = RunWith(hub, {Fault{}, Fault{Fault::Kind::kLate, 3}});
  EXPECT_EQ(r.steps, 8);
  EXPECT_EQ(hub.events.Count(HubEvent::Kind::kWorkerLeftOut, r.workers[1]->id()), 1);
  EXPECT_EQ(hub.events.Count(HubEvent::Kind::kWorkerBack, r.workers[1]->id()), 1);
  EXPECT_EQ(r.workers[1]->left_out, 1);
  EXPECT_EQ(r.workers[1]->states, 2) << "at the start, and again when it came back";
  EXPECT_EQ(r.workers[1]->steps, 7) << "all but the step it was late for";
  // The step it missed was averaged over the other worker alone.
  EXPECT_LT(hub.metrics.samples, 8 * 24);
}

TEST(CoordinatorFaults, AWorkerLeftOutAgainAndAgainSitsOutInsteadOfDelayingEveryStep) {
  // Late at every step it takes part in: without a quarantine it would be
  // left out every other step, each costing the others the deadline.
  InProcessHub hub(2, 40, /*deadline_s=*/0.3, /*min_workers=*/1);
  // The punctual worker's steps take 20 ms: without that, on a busy machine
  // it could finish the run's remaining steps alone before the late one's
  // gradient arrived and brought it back to be late again.
  Fault punctual{Fault::Kind::kSlowLink, -1};
  punctual.link_ms = 20;
  RunResult r = RunWith(hub, {punctual, Fault{Fault::Kind::kLateAgain, 2}});
  EXPECT_EQ(r.steps, 40);
  const int late = r.workers[1]->id();
  // Back at once after the first miss; after the second it sits out 10 s,
  // longer than the rest of this run.
  EXPECT_EQ(hub.events.Count(HubEvent::Kind::kWorkerLeftOut, late), 2);
  EXPECT_EQ(hub.events.Count(HubEvent::Kind::kWorkerBack, late), 1);
  EXPECT_EQ(hub.events.Count(HubEvent::Kind::kWorkerQuarantined, late), 1);
}

// A device whose every round takes 200 ms beside one that needs well under
// a millisecond for the whole global batch: set aside once three measured
// rounds say so (the first, with the full model, measures nothing), told
// with a left-out message, tried again after Attendance::kRecheckRounds
// rounds with the full model and its estimates dropped, and set aside
// again once it is measured anew.
TEST(CoordinatorFaults, AHopelessDeviceIsSetAsideAndTriedAgainLater) {
  InProcessHub hub(2, 50);
  Fault hopeless{Fault::Kind::kSlowLink, -1};
  hopeless.link_ms = 200;
  RunResult r = RunWith(hub, {Fault{}, hopeless});
  EXPECT_EQ(r.steps, 50);
  const int slow = r.workers[1]->id();
  EXPECT_EQ(hub.events.Count(HubEvent::Kind::kWorkerSetAside, slow), 2);
  EXPECT_EQ(hub.events.Count(HubEvent::Kind::kWorkerBroughtBack, slow), 1);
  EXPECT_EQ(hub.events.Count(HubEvent::Kind::kWorkerSetAside, r.workers[0]->id()), 0);
  EXPECT_EQ(hub.metrics.set_asides, 2);
  EXPECT_EQ(r.workers[1]->left_out, 2);
  EXPECT_EQ(r.workers[1]->states, 2) << "at the start, and when tried again";
  // Four rounds before it is set aside, four on trial (the full model, one
  // to measure, two more to settle); the rest without it.
  EXPECT_EQ(r.workers[1]->steps, 8);
  EXPECT_EQ(r.workers[0]->steps, 50);
}

TEST(Quarantine, GrowsFromTheSecondMissAndIsBounded) {
  EXPECT_EQ(Quarantine::For(0).count(), 0);
  EXPECT_EQ(Quarantine::For(1).count(), 0);
  EXPECT_EQ(Quarantine::For(2).count(), 10);
  EXPECT_EQ(Quarantine::For(3).count(), 20);
  EXPECT_EQ(Quarantine::For(7).count(), 320);
  EXPECT_EQ(Quarantine::For(8).count(), 600);
  EXPECT_EQ(Quarantine::For(1000).count(), 600);
}

TEST(CoordinatorFaults, ANonFiniteGradientIsRefusedAndTheModelStaysFinite) {
  InProcessHub hub(3, 6);
  RunResult r = RunWith(hub, {Fault{}, Fault{}, Fault{Fault::Kind::kNanGradient, 2}});
  EXPECT_EQ(r.steps, 6);
  EXPECT_THAT(r.workers[2]->refusal, HasSubstr("non-finite"));
  const auto dropped = hub.events.Of(HubEvent::Kind::kWorkerDropped);
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(dropped[0].worker, r.workers[2]->id());
  for (float w : r.weights) ASSERT_TRUE(std::isfinite(w));
}

TEST(CoordinatorFaults, AWorkerThatRejoinsGetsANewIdAndTheFullState) {
  InProcessHub hub(2, 8, 30, /*min_workers=*/2);
  RunResult r = RunWith(hub, {Fault{}, Fault{Fault::Kind::kRejoin, 3}});
  EXPECT_EQ(r.steps, 8);
  EXPECT_EQ(r.workers[1]->sessions, 2);
  EXPECT_EQ(r.workers[1]->states, 2);
  EXPECT_EQ(hub.events.Count(HubEvent::Kind::kWorkerJoined), 3);
  EXPECT_EQ(r.workers[1]->steps, 7) << "all but the step it left in";
}

TEST(CoordinatorFaults, WhenEveryWorkersResultIsNonFiniteTheRunStopsAsDiverged) {
  InProcessHub hub(3, 10);
  const Fault nan{Fault::Kind::kNanGradient, 2};
  RunResult r = RunWith(hub, {nan, nan, nan});
  // Not a hang: the run ends at the step whose weights give nothing finite.
  EXPECT_EQ(r.steps, 2);
  EXPECT_THAT(hub.coordinator->diverged(), HasSubstr("the model diverged at step 3"));
  EXPECT_TRUE(hub.coordinator->stop_requested());
  EXPECT_EQ(hub.events.Count(HubEvent::Kind::kWorkerDropped), 3);
}

TEST(CoordinatorFaults, ThreeNonFiniteResultsBesideFiniteOnesAreNoDivergence) {
  // Issue 32: one attacker with three sessions, one NaN each in the same
  // step, beside four honest workers. They are dropped; the step and the
  // run go on with the others.
  InProcessHub hub(7, 8);
  const Fault nan{Fault::Kind::kNanGradient, 3};
  RunResult r = RunWith(hub, {Fault{}, Fault{}, Fault{}, Fault{}, nan, nan, nan});
  EXPECT_EQ(r.steps, 8);
  EXPECT_EQ(hub.coordinator->diverged(), "");
  EXPECT_EQ(hub.events.Count(HubEvent::Kind::kWorkerDropped), 3);
  for (int i = 4; i < 7; ++i) EXPECT_THAT(r.workers[i]->refusal, HasSubstr("non-finite"));
  for (float w : r.weights) ASSERT_TRUE(std::isfinite(w));
}

TEST(CoordinatorFaults, OneWorkersNonFiniteResultsAreNoDivergence) {
  InProcessHub hub(2, 8);
  // Its result for step 2 is refused and it goes; the other carries on.
  RunResult r = RunWith(hub, {Fault{}, Fault{Fault::Kind::kNanGradient, 2}});
  EXPECT_EQ(r.steps, 8);
  EXPECT_EQ(hub.coordinator->diverged(), "");
}

}  // namespace
}  // namespace mt
