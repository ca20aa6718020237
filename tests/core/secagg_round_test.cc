// A secure aggregation round in one process (core/secagg/secagg_client.h,
// secagg_server.h): workers as SecAggClient objects, the hub as a
// SecAggServer relaying keys and boxes. The masks cancel exactly, the
// unmasked sum is the plain weighted sum within the fixed-point step, a
// worker that drops mid-round is recovered from the survivors' shares, and
// a hub with fewer shares than the threshold gets nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/secagg/secagg_client.h"
#include "core/secagg/secagg_server.h"
#include "tests/support/chi_square.h"
#include "tests/support/random_values.h"

namespace mt::secagg {
namespace {

using test_support::RandomNormal;

constexpr uint64_t kEpoch = 42;
constexpr size_t kParams = 3000;

// n workers (ids 1..n) with their updates and weights, and the hub. Each
// worker's bundle is shared among all n; the round's roster is all of them.
struct Round {
  explicit Round(int n, uint64_t round = 1)
      : threshold(DefaultThreshold(n)), server(kEpoch, kParams, threshold) {
    std::vector<Holder> holders;
    for (int i = 0; i < n; ++i) {
      const int32_t id = i + 1;
      clients.push_back(std::make_unique<SecAggClient>(id, kEpoch, threshold));
      updates.push_back(RandomNormal(kParams, 100 + id, 0.1F));
      weights.push_back(1.0 / n);
      holders.push_back({id, clients.back()->box_public()});
    }
    for (auto& c : clients) {
      bundles.push_back(c->PrepareBundle(holders));
      roster.push_back({c->id(), c->box_public(), bundles.back().mask_public});
    }
    server.BeginRound(round, roster);
    for (size_t i = 0; i < clients.size(); ++i) {
      server.AddBoxes(clients[i]->id(), bundles[i].boxes);
      clients[i]->BeginRound(round, roster);
    }
  }

  // Worker i's masked update, in two segments (top first, as the backward
  // pass finishes them); `segments` 1 sends only the top one.
  std::vector<uint32_t> Send(size_t i, int segments = 2) {
    std::vector<uint32_t> y(kParams);
    const size_t cut = kParams / 3;
    clients[i]->Mask(cut, updates[i].data() + cut, kParams - cut, weights[i], y.data() + cut);
    server.AddMasked(clients[i]->id(), cut, y.data() + cut, kParams - cut);
    if (segments < 2) return y;
    clients[i]->Mask(0, updates[i].data(), cut, weights[i], y.data());
    server.AddMasked(clients[i]->id(), 0, y.data(), cut);
    server.Submitted(clients[i]->id(), weights[i]);
    return y;
  }

  // Every survivor answers the request; returns the unmasked average.
  std::vector<float> Unmask() {
    const UnmaskRequest request = server.CloseRound();
    for (auto& c : clients) {
      const auto boxes = request.boxes_for.find(c->id());
      if (boxes == request.boxes_for.end()) continue;
      server.AddRevealed(c->id(), c->Reveal(request.survivors, request.dropped, boxes->second));
    }
    std::vector<float> out(kParams);
    server.Finish(out.data());
    return out;
  }

  // What the ring sum of the given workers' plain encodings decodes to.
  std::vector<float> PlainFixedPoint(const std::vector<size_t>& who) const {
    const FixedPoint fp;
    std::vector<uint32_t> sum(kParams, 0), q(kParams);
    double total = 0;
    for (size_t i : who) {
      fp.Encode(updates[i].data(), kParams, weights[i], q.data());
      AddInRing(sum.data(), q.data(), kParams);
      total += weights[i];
    }
    std::vector<float> out(kParams);
    fp.Decode(sum.data(), kParams, total, out.data());
    return out;
  }

  std::vector<std::unique_ptr<SecAggClient>> clients;
  std::vector<std::vector<float>> updates;
  std::vector<double> weights;
  std::vector<Member> roster;
  std::vector<Bundle> bundles;
  int threshold;
  SecAggServer server;
};

TEST(SecAggRound, MasksCancelExactlyAndTheSumIsThePlainAverageWithinTheStep) {
  Round r(4);
  r.weights = {0.1, 0.2, 0.3, 0.4};
  for (size_t i = 0; i < 4; ++i) r.Send(i);
  const std::vector<float> out = r.Unmask();
  // Bit for bit the sum of the unmasked encodings: every mask cancelled.
  EXPECT_EQ(out, r.PlainFixedPoint({0, 1, 2, 3}));
  const double step = FixedPoint().Step();
  for (size_t k = 0; k < kParams; ++k) {
    double plain = 0;
    for (size_t i = 0; i < 4; ++i) plain += r.weights[i] * r.updates[i][k];
    ASSERT_NEAR(out[k], plain, 4 * step / 2 + 1e-6 * std::abs(plain)) << k;
  }
}

TEST(SecAggRound, EachMaskedUpdateLooksUniformAndAloneDecodesToNothing) {
  Round r(3);
  for (size_t i = 0; i < 3; ++i) {
    const std::vector<uint32_t> y = r.Send(i);
    EXPECT_LT(test_support::ChiSquareOfBytes(y.data(), y.size() * 4),
              test_support::kChiSquare255AtOneInAMillion)
        << "worker " << i + 1;
    // Read as an update, the masked vector is noise as wide as the ring.
    std::vector<float> alone(kParams);
    FixedPoint().Decode(y.data(), kParams, r.weights[i], alone.data());
    double err = 0;
    for (size_t k = 0; k < kParams; ++k) err += std::abs(alone[k] - r.updates[i][k]);
    EXPECT_GT(err / kParams, 1.0);  // the update's values are ~0.1
  }
  (void)r.Unmask();
}

TEST(SecAggRound, AWorkerThatDropsMidRoundIsRecoveredFromTheSurvivorsShares) {
  Round r(5);  // threshold 3
  r.weights = {0.2, 0.2, 0.2, 0.2, 0.2};
  r.Send(0);
  r.Send(1, /*segments=*/1);  // drops after its first segment
  r.Send(2);
  // 4 never sends at all.
  r.Send(4);
  const std::vector<float> out = r.Unmask();
  EXPECT_EQ(out, r.PlainFixedPoint({0, 2, 4}));
}

TEST(SecAggRound, TwoWorkersOfThreeSufficeAndTheDroppedOnesMasksComeOff) {
  Round r(3);  // threshold 2
  r.Send(0);
  r.Send(2);
  EXPECT_EQ(r.Unmask(), r.PlainFixedPoint({0, 2}));
}

TEST(SecAggRound, FewerSurvivorsThanTheThresholdCannotBeUnmasked) {
  Round r(5);  // threshold 3
  r.Send(0);
  r.Send(3);
  EXPECT_THROW(r.server.CloseRound(), std::runtime_error);
}

TEST(SecAggRound, AHubWithFewerSharesThanTheThresholdGetsNothing) {
  Round r(5);                                // threshold 3
  for (size_t i = 0; i < 4; ++i) r.Send(i);  // 5 drops
  const UnmaskRequest request = r.server.CloseRound();
  // Only two survivors answer: every secret has 2 shares, below 3.
  for (size_t i = 0; i < 2; ++i) {
    const int32_t id = r.clients[i]->id();
    r.server.AddRevealed(
        id, r.clients[i]->Reveal(request.survivors, request.dropped, request.boxes_for.at(id)));
  }
  EXPECT_FALSE(r.server.CanFinish());
  std::vector<float> out(kParams);
  EXPECT_THROW(r.server.Finish(out.data()), std::invalid_argument);

  // A worker asked by a hub claiming fewer survivors than the threshold
  // reveals nothing.
  Round s(5);
  for (size_t i = 0; i < 5; ++i) s.Send(i);
  const UnmaskRequest honest = s.server.CloseRound();
  const int32_t id = s.clients[0]->id();
  EXPECT_THROW(s.clients[0]->Reveal({1, 2}, {3, 4, 5}, {}), std::invalid_argument);
  // Nor one that names a member as both survivor and dropped, or asks for
  // the key share of a member it calls a survivor.
  EXPECT_THROW(s.clients[0]->Reveal({1, 2, 3, 4, 5}, {5}, {}), std::invalid_argument);
  std::vector<SealedShare> boxes = honest.boxes_for.at(id);
  ASSERT_FALSE(boxes.empty());
  boxes[0].kind = ShareKind::kPrivateKey;
  EXPECT_THROW(s.clients[0]->Reveal(honest.survivors, honest.dropped, boxes),
               std::invalid_argument);
  // The honest request still works after those refusals.
  s.server.AddRevealed(
      id, s.clients[0]->Reveal(honest.survivors, honest.dropped, honest.boxes_for.at(id)));
}

TEST(SecAggRound, TheHubCannotOpenTheBoxesItRelays) {
  Round r(3);
  const UnmaskRequest request = [&] {
    for (size_t i = 0; i < 3; ++i) r.Send(i);
    return r.server.CloseRound();
  }();
  // The hub knows every public key but no private one: a key it derives
  // from its own pair and a member's box key opens nothing.
  const KeyPair hub = KeyPair::Generate();
  for (const auto& [holder, boxes] : request.boxes_for) {
    for (const SealedShare& b : boxes) {
      const Key32 guess = DeriveKey(hub.Agree(r.roster[b.from - 1].box_public), KeyUse::kShareBox,
                                    kEpoch, b.from, b.to);
      const BoxLabel label{kEpoch, b.seq, b.kind, b.from, b.to, r.roster[b.from - 1].mask_public};
      EXPECT_THROW(Open(guess, label, b.box), std::runtime_error);
    }
  }
}

TEST(SecAggRound, EachBundleMasksOneRoundAndAnOldBundlesBoxesDoNotOpen) {
  Round r(3);
  for (size_t i = 0; i < 3; ++i) r.Send(i);
  (void)r.Unmask();  // round 1: worker 3 survived, its self seed is out
  // The bundle was used by the round: another round needs a new one.
  EXPECT_THROW(r.clients[0]->BeginRound(2, r.roster), std::invalid_argument);

  std::vector<Holder> holders;
  for (const auto& c : r.clients) holders.push_back({c->id(), c->box_public()});
  std::vector<Member> next = r.roster;
  std::vector<Bundle> bundles;
  for (size_t i = 0; i < 3; ++i) {
    bundles.push_back(r.clients[i]->PrepareBundle(holders));
    next[i].mask_public = bundles[i].mask_public;
  }
  // A roster that gives a peer a mask key of an earlier round is refused:
  // each key masks one round.
  std::vector<Member> stale = r.roster;
  stale[0].mask_public = bundles[0].mask_public;
  EXPECT_THROW(r.clients[0]->BeginRound(2, stale), std::invalid_argument);
  for (size_t i = 0; i < 3; ++i) r.clients[i]->BeginRound(2, next);
  // Round 2: worker 3 drops. Were the hub to hand worker 1 worker 3's key
  // box of round 1's bundle, its mask key of round 1 and the self seed
  // revealed then would unmask worker 3's update of round 1: that box is
  // bound to the old mask key and does not open.
  std::vector<SealedShare> old_key_box;
  for (const SealedShare& b : r.bundles[2].boxes)
    if (b.to == 1 && b.kind == ShareKind::kPrivateKey) old_key_box.push_back(b);
  ASSERT_EQ(old_key_box.size(), 1u);
  EXPECT_THROW(r.clients[0]->Reveal({1, 2}, {3}, old_key_box), std::runtime_error);
  // The box of the round's own bundle opens.
  std::vector<SealedShare> key_box;
  for (const SealedShare& b : bundles[2].boxes)
    if (b.to == 1 && b.kind == ShareKind::kPrivateKey) key_box.push_back(b);
  EXPECT_EQ(r.clients[0]->Reveal({1, 2}, {3}, key_box).size(), 2u);
}

}  // namespace
}  // namespace mt::secagg
