// Secure aggregation's protocol messages without a network: three workers'
// SecureUpdate (worker/secure_update.h) and the hub's SecureRounds
// (hub/secagg/secure_rounds.h) pass holders, bundles, the plan's members,
// masked segments, the unmasking request and the reveals as they travel;
// the hub's result is the workers' weighted average, also with one dropped
// mid-round, and it refuses what does not fit.
#include "hub/secagg/secure_rounds.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "core/secagg/fixed_point.h"
#include "tests/support/random_values.h"
#include "worker/hub_session.h"
#include "worker/secure_update.h"

namespace mt {
namespace {

constexpr size_t kParams = 1000;

struct Cluster {
  explicit Cluster(int n) : hub(n, 0, kParams) {
    for (int i = 0; i < n; ++i) {
      proto::JoinReply join;
      join.set_worker_id(i);
      *join.mutable_secure_aggregation() = hub.settings();
      workers.push_back(std::make_unique<SecureUpdate>(join, 0));
      EXPECT_EQ(hub.OnHello(i, workers.back()->box_key()), "");
      updates.push_back(test_support::RandomNormal(kParams, 40 + i, 0.2F));
    }
    const proto::HubMessage holders = hub.Holders();
    for (int i = 0; i < n; ++i) {
      const proto::WorkerMessage bundle = workers[i]->OnHolders(holders.secagg_holders());
      EXPECT_EQ(hub.OnBundle(i, bundle.secagg_bundle()), "");
    }
  }

  // A round of `step` over all workers; those in `sending` send their
  // update, batch i + 1 each. Returns the hub's result.
  std::vector<float> Round(int64_t step, const std::vector<int>& sending) {
    std::vector<int> ids;
    for (size_t i = 0; i < workers.size(); ++i) ids.push_back(static_cast<int>(i));
    EXPECT_EQ(hub.Coverable(ids), ids);
    proto::StepPlan plan;
    plan.set_step(step);
    for (const proto::SecAggMember& m : hub.BeginRound(step, ids)) *plan.add_secagg_members() = m;
    for (int id : ids) {
      proto::Assignment* a = plan.add_assignments();
      a->set_worker_id(id);
      a->set_batch(id + 1);
    }
    std::vector<std::vector<float>> masked(workers.size(), std::vector<float>(kParams));
    std::vector<SecureRounds::Update> in;
    for (int id : ids) {
      const proto::WorkerMessage next = workers[id]->OnPlan(plan);
      EXPECT_EQ(hub.OnBundle(id, next.secagg_bundle()), "");  // for the round after
      if (std::find(sending.begin(), sending.end(), id) == sending.end()) continue;
      std::vector<uint32_t> y(kParams);
      workers[id]->Mask(0, updates[id].data(), kParams, y.data());
      std::memcpy(masked[id].data(), y.data(), kParams * sizeof(uint32_t));
      in.push_back({id, masked[id].data(), (id + 1) / 6.0});
    }
    for (const auto& [id, request] : hub.Close(in)) {
      const proto::WorkerMessage reveal = workers[id]->OnUnmask(request.secagg_unmask());
      EXPECT_EQ(hub.OnReveal(id, reveal.secagg_reveal()), "");
    }
    EXPECT_TRUE(hub.CanFinish());
    return hub.Finish();
  }

  std::vector<float> Plain(const std::vector<int>& sending) const {
    double total = 0;
    for (int id : sending) total += id + 1;
    std::vector<float> out(kParams);
    for (size_t k = 0; k < kParams; ++k) {
      double sum = 0;
      for (int id : sending) sum += (id + 1) * updates[id][k];
      out[k] = static_cast<float>(sum / total);
    }
    return out;
  }

  SecureRounds hub;
  std::vector<std::unique_ptr<SecureUpdate>> workers;
  std::vector<std::vector<float>> updates;
};

void ExpectNear(const std::vector<float>& a, const std::vector<float>& b, double tol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) ASSERT_NEAR(a[k], b[k], tol) << k;
}

TEST(SecureRounds, TheHubGetsTheWeightedAverageRoundAfterRound) {
  Cluster c(3);
  const double step = secagg::FixedPoint().Step();
  ExpectNear(c.Round(0, {0, 1, 2}), c.Plain({0, 1, 2}), 3 * step);
  ExpectNear(c.Round(1, {0, 1, 2}), c.Plain({0, 1, 2}), 3 * step);  // the next bundles
}

TEST(SecureRounds, AWorkerDroppedMidRoundComesOffTheSurvivorsAverage) {
  Cluster c(3);
  ExpectNear(c.Round(0, {0, 2}), c.Plain({0, 2}), 3 * secagg::FixedPoint().Step());
}

TEST(SecureRounds, TooFewSurvivorsStopTheRoundAndBadMessagesAreRefused) {
  Cluster c(3);
  EXPECT_THROW(c.Round(0, {1}), std::runtime_error);
  EXPECT_NE(c.hub.OnHello(7, "short"), "");
  proto::SecAggBundle foreign;
  foreign.set_mask_key(std::string(32, 'k'));
  proto::SealedShare* box = foreign.add_boxes();
  box->set_from(1);  // sent by worker 0 in worker 1's name
  box->set_to(2);
  box->set_kind(proto::SECAGG_SHARE_SELF_SEED);
  EXPECT_NE(c.hub.OnBundle(0, foreign), "");
  // A worker refuses an unmasking request for a round it did not mask.
  proto::SecAggUnmask stale;
  stale.set_step(5);
  EXPECT_THROW(c.workers[0]->OnUnmask(stale), HubProtocolError);
}

}  // namespace
}  // namespace mt
