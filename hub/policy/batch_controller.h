// Chooses each worker's batch for the next step. With a synchronous barrier
// the step lasts as long as its slowest worker, so the balanced policy gives
// each worker a share of the fixed global batch that makes them all finish
// together: worker i with per-exchange overhead o_i (upload, download,
// latency) and time per sample t_i gets b_i with o_i / h + t_i * b_i equal
// for all, within its memory cap, in rounds of h local steps per exchange
// (--sync-every; 1 in the per-step mode). Estimates are smoothed and changes
// damped, with a dead band, so measurement noise does not make sizes
// oscillate.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace mt {

enum class BatchPolicy { kFixed, kBalanced };
// Its command-line name ("fixed", "balanced").
const char* BatchPolicyName(BatchPolicy policy);

struct BatchControllerOptions {
  double smoothing = 0.15;  // weight of a new measurement in the running estimates
  double damping = 0.5;     // fraction of the way to the target taken each step
  // Batches stay as they are unless the target would shorten the predicted
  // step by more than this fraction.
  double dead_band = 0.08;
};

class BatchController {
 public:
  explicit BatchController(BatchPolicy policy, BatchControllerOptions options = {});

  // Local SGD: the fewest samples a worker's local steps take. A device
  // five times slower than the rest was balanced down to 2-5 samples, and
  // its local steps at the run's learning rate diverged and took the run
  // with them (docs/benchmarks.md, Wi-Fi); at 16 its partner waited for it
  // a third of each round.
  static constexpr int kMinLocalBatch = 8;
  // A worker's own compute time is only a hint: it is held between this
  // share of the round trip the hub measured and the whole of it. A worker
  // claiming 0.01 ms was given two thirds of all samples before. The
  // bound's floor of a half keeps the estimate stable (the time a worker
  // is credited with grows at least half as fast as its batch), at the cost
  // of taking part of a slow link's exchange for compute in the per-step
  // mode; over such links --sync-every auto makes compute most of a round.
  static constexpr double kMinComputeShare = 0.5;

  struct Member {
    int worker = 0;
    int cap = 0;         // the most samples that fit in its memory
    double share = 1.0;  // the fixed policy's proportion
  };

  // One completed round of a worker (a step in the per-step mode): `batch`
  // samples in all took compute_ms on the device; round_trip_ms (< 0:
  // unknown, e.g. the round began with the full model) from the hub sending
  // the plan to holding the whole gradient or change. The difference is the
  // overhead of one exchange.
  // `steps`: the round's steps (1 in the per-step mode). With a round trip,
  // compute_ms is held within [kMinComputeShare, 1] of it.
  void Observe(int worker, int batch, double compute_ms, double round_trip_ms, int steps = 1);
  // A worker that left: its estimates go, so a returning device is measured anew.
  void Forget(int worker);
  // The compute time per sample a worker timed itself before its first
  // step (Hello.compute_ms_per_sample): a prior, until its own steps are
  // measured. One unchecked claim once set the whole group's batch (a
  // worker claiming 1e-30 ms made the others take one sample each: global
  // batch 66 instead of 192, issue 45), so a hint is believed only within
  // bounds: finite, and no faster than SetHintFloor's floor (what the
  // model's arithmetic takes on the fastest plausible device). Returns
  // whether it was believed; one that is not counts as none.
  bool Hint(int worker, double ms_per_sample);
  // The fastest time per sample a hint may claim (hub/policy/plausible_speed.h).
  void SetHintFloor(double ms_per_sample) { hint_floor_ = ms_per_sample; }
  double hint_floor() const { return hint_floor_; }

  // The global batch that follows the devices' speeds: the fastest member
  // takes `per_worker` samples a step and every other what it computes in
  // the same time, within its cap. A pair with one phone 5x slower trains
  // 64 + 13 a step, not 2 x 64: at 128 it needed 1.18x the samples to
  // reach 0.85 and gained at most 1.2x the samples per second, so it was
  // slower than its fast phone alone (docs/benchmarks.md, Wi-Fi). Equal
  // devices keep per_worker each. 0 while a member has no hint.
  // Hints are claims nobody has checked yet: the speed the others are
  // measured against is the fastest that two members claim
  // (HintReference), so no single claim sets the group's batch; a claim
  // faster than that only takes per_worker itself.
  int FollowingTotal(int per_worker, const std::vector<Member>& members) const;
  // The speed (ms per sample) that at least two of `members` claim to
  // reach: the second fastest hint (the only one for a single member);
  // < 0 when fewer than that have one. A pair, where nothing tells a slow
  // phone from the victim of a partner's lie, believes the faster claim up
  // to kPairTrustedSpread times the slower: its partner takes at least
  // 64 / 8 samples, a local step's floor, and the measured split follows
  // the real speeds from the first measured round (1x + 5x: 64 + 13; at
  // 64 + 64 the pair needed 1.18x one phone's samples, docs/faults.md).
  static constexpr double kPairTrustedSpread = 8;
  double HintReference(const std::vector<Member>& members) const;

  // Batches for the next step, in the members' order: integers, at least 1
  // when total allows, within each cap, summing to total (or to the caps'
  // sum when they hold less).
  // `steps`: steps in the round they are for, each taking a batch, with one
  // exchange at its end.
  // `min_batch`: the balanced policy gives nobody fewer samples than this
  // (or than its cap, or than an equal share; damping and the dead band
  // included), e.g. for local SGD, where a worker takes optimizer steps on
  // its batch alone.
  std::vector<int> Next(int total, const std::vector<Member>& members, int steps = 1,
                        int min_batch = 1);

  // The balanced policy's step for these members, undamped, as the running
  // estimates predict it (hub/policy/attendance.h weighs a worker by it):
  // its time in milliseconds, or < 0 when a member is not measured yet
  // (infinite when their memory caps hold less than `total`).
  double PredictStepMs(int total, const std::vector<Member>& members, int steps = 1,
                       int min_batch = 1) const;

  BatchPolicy policy() const { return policy_; }
  // Running estimates (overhead: of one exchange); < 0 when the worker has
  // not been measured yet.
  double ms_per_sample(int worker) const;
  double overhead_ms(int worker) const;
  // Its Hint, if believed; < 0 when it sent none (or one not believed).
  double hint(int worker) const;

 private:
  struct Estimate {
    double ms_per_sample = -1;
    double overhead_ms = -1;
  };
  // Time per sample and overhead per step of each member, as estimated.
  struct Speeds {
    std::vector<double> ms_per_sample, overhead_ms;
    double StepMs(const std::vector<double>& batches) const;
  };
  // Overheads per step of a round of `steps`.
  Speeds SpeedsOf(const std::vector<Member>& members, int steps) const;
  // The fewest samples each member may get: min_batch, but never above
  // an equal share of total or its cap, and at least 1.
  static std::vector<double> Floors(int total, const std::vector<Member>& members, int min_batch);
  std::vector<double> BalancedTargets(int total, const std::vector<Member>& members,
                                      const Speeds& speeds, const std::vector<double>& floor) const;

  BatchPolicy policy_;
  BatchControllerOptions options_;
  std::map<int, Estimate> estimates_;
  std::map<int, double> hints_;  // Hint: ms per sample, as each worker timed itself
  double hint_floor_ = 0;        // SetHintFloor
  // The previous answer, which damping and the dead band start from.
  std::vector<int> last_workers_, last_batches_;
  int last_total_ = 0;
};

}  // namespace mt
