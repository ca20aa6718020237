// The step coordinator in-process, with no network: N fake workers run as
// threads behind an in-memory transport (tests/hub/fake_workers.h), as gloo
// tests N ranks: any split of the global batch, auto's choice of local
// steps, admission and stopping.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/hub/fake_workers.h"

namespace mt {
namespace {

using test_support::FakeWorker;
using test_support::Fault;
using test_support::InProcessHub;
using test_support::RunResult;
using test_support::RunWith;
using ::testing::HasSubstr;

class CoordinatorWorkers : public ::testing::TestWithParam<int> {};

TEST_P(CoordinatorWorkers, AnySplitOfTheGlobalBatchGivesTheOneWorkerWeights) {
  const int n = GetParam();
  InProcessHub hub(n, 12);
  hub.config.global_batch = 12;  // the same global batch for every n
  // The exact batch-weighted mean (auto clips a worker whose share strays).
  hub.config.aggregate = Aggregation::kMean;
  hub.Rebuild();
  RunResult r = RunWith(hub, std::vector<Fault>(static_cast<size_t>(n)));
  EXPECT_EQ(r.steps, 12);
  InProcessHub one(1, 12);
  one.config.global_batch = 12;
  one.Rebuild();
  test_support::ExpectNear(r.weights, RunWith(one, {Fault{}}).weights);
  for (auto& w : r.workers) {
    EXPECT_TRUE(w->got_stop);
    EXPECT_EQ(w->states, 1) << "only the first step carries the full state";
  }
  EXPECT_EQ(hub.events.Count(HubEvent::Kind::kStepDone), 12);
  EXPECT_EQ(hub.events.Count(HubEvent::Kind::kWorkerDropped), 0);
}

INSTANTIATE_TEST_SUITE_P(Counts, CoordinatorWorkers, ::testing::Values(1, 2, 3, 5));

TEST(CoordinatorSyncPeriod, AutoTakesLocalStepsBehindASlowLinkAndReportsTheChange) {
  InProcessHub hub(2, 200);
  hub.config.local_sgd.sync_every = 0;              // auto
  hub.config.compression = Compression::kNone;      // H alone (an encoding change defers it)
  hub.config.optimizer.kind = OptimizerKind::kSgd;  // the longest rounds (Adam's stop at 4)
  hub.Rebuild();
  Fault slow{Fault::Kind::kSlowLink, -1};
  RunResult r = RunWith(hub, {slow, slow});
  EXPECT_EQ(r.steps, 200);
  // A 30 ms exchange against ~1 ms of compute per step: the most local
  // steps, once the first rounds have measured it.
  EXPECT_EQ(hub.coordinator->sync_every(), SyncPeriod::kMax);
  ASSERT_EQ(hub.metrics.sync_changes.size(), 1u);
  EXPECT_EQ(hub.metrics.sync_changes[0].from, 1);
  EXPECT_EQ(hub.metrics.sync_changes[0].to, SyncPeriod::kMax);
  // The first round carried the full model, which says nothing about the link.
  const int unmeasured = 1;
  EXPECT_EQ(hub.metrics.sync_changes[0].step, unmeasured + SyncPeriod::kSettleRounds);
  EXPECT_GT(hub.metrics.sync_changes[0].exchange_ms, 25);
  const auto changed = hub.events.Of(HubEvent::Kind::kSyncPeriodChanged);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0].detail, "1->64");
  // The first rounds exchanged gradients; the rest were rounds of local steps.
  const std::vector<int>& seen = r.workers[0]->local_steps;
  const size_t per_step = unmeasured + SyncPeriod::kSettleRounds;
  ASSERT_GT(seen.size(), per_step);
  for (size_t i = 0; i < per_step; ++i) EXPECT_EQ(seen[i], 0) << "round " << i;
  EXPECT_EQ(seen[per_step], SyncPeriod::kMax);
}

// The links below take 100 ms uncompressed, far from the 20 ms line and
// from what a busy machine adds to a round, so the choices are the same
// under load.
TEST(CoordinatorCompression, AutoEncodesBehindANarrowLinkBothWaysAndReportsTheChange) {
  InProcessHub hub(2, 40);
  hub.config.local_sgd.sync_every = 1;    // the encoding alone
  hub.config.compression = std::nullopt;  // auto (InProcessHub fixes none)
  hub.Rebuild();
  Fault narrow{Fault::Kind::kNarrowLink, -1};
  narrow.link_ms = 100;
  RunResult r = RunWith(hub, {narrow, narrow});
  EXPECT_EQ(r.steps, 40);
  // 100 ms uncompressed against well under a millisecond of compute: the
  // budget is kFastExchangeMs, which only topk's ~7 ms fits (int8: ~25).
  ASSERT_EQ(hub.metrics.compression_changes.size(), 1u);
  const CompressionChange& change = hub.metrics.compression_changes[0];
  EXPECT_EQ(change.from, Compression::kNone);
  EXPECT_EQ(change.to, Compression::kTopK);
  EXPECT_GT(change.exchange_ms, 80);
  EXPECT_EQ(change.budget_ms, CompressionChoice::kFastExchangeMs);
  const auto changed = hub.events.Of(HubEvent::Kind::kCompressionChanged);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0].detail, "none->topk");
  EXPECT_EQ(hub.coordinator->compression(), Compression::kTopK);
  // Plans asked for it from the change on, and results came encoded so.
  for (const auto& w : r.workers) {
    const auto& plans = w->plan_encodings;
    ASSERT_FALSE(plans.empty());
    EXPECT_EQ(plans.front(), proto::COMPRESSION_NONE);
    EXPECT_EQ(plans.back(), proto::COMPRESSION_TOPK);
    EXPECT_TRUE(std::is_sorted(plans.begin(), plans.end())) << "one change, none to topk";
    EXPECT_EQ(w->result_encodings.back(), proto::COMPRESSION_TOPK);
  }
}

TEST(CoordinatorCompression, AutoGoesBackToNoneWhereFewerBytesDoNotHelp) {
  // A link whose 100 ms are latency: topk is tried, measured as slow, and
  // none comes back, to stay.
  InProcessHub hub(2, 24);
  hub.config.local_sgd.sync_every = 1;
  hub.config.compression = std::nullopt;  // auto
  hub.Rebuild();
  Fault slow{Fault::Kind::kSlowLink, -1};
  slow.link_ms = 100;
  RunResult r = RunWith(hub, {slow, slow});
  EXPECT_EQ(r.steps, 24);
  const auto changed = hub.events.Of(HubEvent::Kind::kCompressionChanged);
  ASSERT_EQ(changed.size(), 2u);
  EXPECT_EQ(changed[0].detail, "none->topk");
  EXPECT_EQ(changed[1].detail, "topk->none");
  EXPECT_EQ(hub.coordinator->compression(), Compression::kNone);
  EXPECT_EQ(r.workers[0]->plan_encodings.back(), proto::COMPRESSION_NONE);
}

TEST(CoordinatorAdmission, RefusesAWrongTokenAndAnOldProtocol) {
  InProcessHub hub(1, 1);
  hub.config.token = "s3cret";
  hub.Rebuild();
  proto::JoinRequest join;
  proto::JoinReply reply;
  join.set_protocol_version(wire::kProtocolVersion);
  EXPECT_EQ(hub.coordinator->Join(join, "t", &reply).code, HubStatus::Code::kUnauthenticated);
  join.set_token("s3cret");
  join.set_protocol_version(wire::kProtocolVersion - 1);
  EXPECT_EQ(hub.coordinator->Join(join, "t", &reply).code, HubStatus::Code::kFailedPrecondition);
  join.set_protocol_version(wire::kProtocolVersion);
  EXPECT_TRUE(hub.coordinator->Join(join, "t", &reply).ok());
  hub.coordinator->Finish("over", -1);
  EXPECT_EQ(hub.coordinator->Join(join, "t", &reply).code, HubStatus::Code::kOutOfRange);
}

TEST(CoordinatorStop, AStopAtTheBarrierEndsTheStepWithNothingApplied) {
  InProcessHub hub(2, 100);
  // One worker never answers: the step waits at the barrier until stopped.
  FakeWorker quiet(*hub.coordinator, "quiet", Fault{Fault::Kind::kLate, 0});
  FakeWorker busy(*hub.coordinator, "busy", Fault{});
  quiet.Start();
  busy.Start();
  ASSERT_TRUE(hub.coordinator->WaitForWorkers());
  ASSERT_TRUE(hub.coordinator->PublishStep());
  std::thread stopper([&] { hub.coordinator->RequestStop(); });
  const auto outcome = hub.coordinator->CompleteStep();
  stopper.join();
  EXPECT_TRUE(outcome.stopped);
  EXPECT_EQ(hub.coordinator->steps_done(), 0);
  EXPECT_FALSE(hub.coordinator->PublishStep());
  hub.coordinator->Finish("stopped", -1);
  quiet.Join();
  busy.Join();
  EXPECT_TRUE(quiet.got_stop);
  EXPECT_TRUE(busy.got_stop);
}

}  // namespace
}  // namespace mt
