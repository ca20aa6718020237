// How many local steps each worker takes between exchanges (--sync-every).
// Fixed, or automatic: then the hub measures what each round costs beyond
// compute (the exchange: upload, hub work, download, latency) against the
// compute itself, and picks H in [1, kMax] so the exchange stays about
// kExchangeShare of a round (5%: measured over a shared 32 Mbit/s medium
// with three phone-class workers, 10% left a fifth of the speed-up unused
// while accuracy after an epoch was the same within noise; see
// docs/benchmarks.md, Wi-Fi). On a fast network (an exchange under
// kFastExchangeMs, as on loopback or a wired LAN) it stays at 1, the exact
// synchronous mode, whatever the share: there a few milliseconds are not
// worth giving up exactness for. 20 ms: loopback exchanges take 0.5-3 ms
// here, and 10 on a 2-core machine running tests in parallel; over Wi-Fi an
// exchange of LeNet-5 costs 30 to hundreds of milliseconds and H rises.
// Once in rounds, it returns to 1 only below half that line (hysteresis).
//
// With overlap (workers compute the next round while a round's exchange
// travels, worker/lookahead.h) the hub's round time no longer shows the
// exchange once rounds run; the exchange is then what the workers saw
// (GradientChunk.exchange_ms) and the rule stays the same. Choosing the
// smallest H that merely hides the exchange was tried and was worse on
// both counts: at H = 2-6 over shared 32 Mbit/s the exchange's jitter (a
// lost packet's retransmission) showed through, and steps taken ahead on
// stale weights cost as much accuracy as fewer exchanges won
// (docs/benchmarks.md).
//
// The longest round auto picks depends on the optimizer
// (AutoRoundCeiling): three LeNet-5 workers with Adam needed 36.9k samples
// to 0.85 at H 4 but 52.2k at H 16 and 60.1k at H 64 (one Adam worker
// alone: 33.6k), so with Adam a shorter round pays for its exchange many
// times over (over the shared medium with topk: 1.98x one phone alone at
// H 4 against 1.52x with the 5% rule's H); with SGD the samples barely
// depend on H (63.0k at H 4, 64.5k at 16) and the 5% rule stands.
//
// Estimates are smoothed over rounds and H only moves when the target is at
// least twice or at most half the current value, after a few rounds at the
// current value, so noise does not make it oscillate. On a busy machine
// that was not enough: one round stalled for 100 ms (the scheduler, not the
// network) lifted the smoothed exchange over the fast line, and loopback
// went 1 -> 7 -> 1 -> 6 -> 1 in 100 steps. So a change also needs the
// median of the last few rounds (at least kConfirmRounds) to call for it,
// and after a change kMinDwellMs of rounds at the new value before the
// next. A median rather than every round agreeing: over a shaped link a
// topk exchange of ~40 ms has single rounds under the fast line, and
// waiting for three in a row over it took H past 80 steps at 1. Transport-free and clock-free: the
// coordinator feeds it measured rounds.
#pragma once

#include <array>
#include <cstdint>

#include "core/optim/optimizer.h"
#include "hub/policy/settle_damping.h"

namespace mt {

// What a round's exchange cost (milliseconds): its time less the compute, or
// with overlapped rounds of local steps what the workers saw (`seen_ms`,
// < 0: not known), since the round's time then hides it.
double RoundExchangeMs(double round_ms, double compute_ms, double seen_ms, bool overlapped);

// A running estimate with a new round's sample in it (estimate < 0: none
// yet, the sample is it): what the hub's automatic choices decide on.
double SmoothEstimate(double estimate, double sample);

class SyncPeriod {
 public:
  static constexpr int kMax = 64;
  // The longest round auto gives workers optimizing with `kind` (see above).
  static int AutoRoundCeiling(OptimizerKind kind);
  static constexpr double kFastExchangeMs = 20;
  static constexpr double kExchangeShare = 0.05;
  // Rounds measured at the current H before it may change again, more
  // after changes that undo each other (hub/policy/settle_damping.h).
  static constexpr int kSettleRounds = SettleDamping::kMin;
  static constexpr int kMaxSettleRounds = SettleDamping::kMax;
  // Rounds whose median must call for a change in its direction too (of
  // the last ChangeDamping::kWindow).
  static constexpr int kConfirmRounds = 3;
  // Time spent in rounds at a value before it may change again: a busy
  // machine's stalls come in bursts of a few seconds.
  static constexpr double kMinDwellMs = 5000;

  // fixed >= 1: always that many steps; 0: automatic, starting at 1, at
  // most `ceiling` steps. `overlap`: rounds overlap their exchange.
  explicit SyncPeriod(int fixed, bool overlap = false, int ceiling = kMax);

  bool automatic() const { return automatic_; }
  int ceiling() const { return ceiling_; }
  int settle_rounds() const { return settle_.rounds(); }
  // Steps in the next round (before it is cut at epoch ends and
  // checkpoints).
  int steps() const { return steps_; }
  // Whether rounds exchange weight changes (local SGD) rather than
  // gradients. Once on, it stays on: each worker then holds its own
  // optimizer state, which per-step gradients applied by every worker alike
  // would need to be identical again.
  bool local() const { return local_; }

  // A round in which every participant finished: `steps` steps,
  // `round_ms` from the plan going out to the last change arriving,
  // `compute_ms` the slowest participant's compute in it, `seen_ms` the
  // shortest exchange a participant saw before it (< 0: not known).
  // Returns whether steps() changed.
  bool Observe(int64_t steps, double round_ms, double compute_ms, double seen_ms = -1);

  // The exchange changed (another encoding): measure it afresh before the
  // next decision. `lossless`: the new encoding is none. Until per-step
  // exchanges are measured at it, only then may a fast round exchange
  // bring rounds back to one step: a pair that went from topk to int8 at H
  // 4 measured rounds under 10 ms, went back to per-step, where int8 cost
  // 50 ms, and flipped H and the encoding for 250 steps (0.67x one phone).
  void ForgetExchange(bool lossless = true) {
    exchange_ms_ = -1;
    per_step_exchange_ms_ = -1;
    lossless_ = lossless;
    rounds_at_current_ = 0;
    damping_.count = 0;
    damping_.next = 0;
  }

  // Whether the next round has a single participant. Its round is that
  // worker's own training: nothing is averaged, so the optimizer's ceiling
  // (AutoRoundCeiling: Adam's 4, for the averaging's sake) does not hold
  // and auto may lengthen the round up to kMax. A phone 20x slower than its
  // partner is set aside (hub/policy/attendance.h), and the partner then
  // paid a 4-step round's exchange over the shared medium and trained at
  // 0.72x its own speed alone. With others again, a round over the ceiling
  // comes back to it at once. Returns whether steps() changed.
  bool SetSoleParticipant(bool sole);

  // The running estimates behind the last decision (< 0: none yet).
  double exchange_ms() const { return exchange_ms_; }
  // Whether rounds overlap their exchange now (overlap asked for, and local).
  bool overlapped() const { return overlap_ && local_; }
  double step_compute_ms() const { return step_compute_ms_; }

 private:
  // The H that an exchange of `exchange_ms` and a step's compute of
  // `step_compute_ms` call for.
  int Target(double exchange_ms, double step_compute_ms) const;
  // +1: `target` calls for longer rounds, -1: shorter, 0: keep (within 2x).
  int Direction(int target) const;

  bool automatic_;
  bool overlap_;
  int ceiling_;
  bool sole_ = false;  // SetSoleParticipant's
  int steps_;
  bool local_;
  double exchange_ms_ = -1;
  double step_compute_ms_ = -1;
  int rounds_at_current_ = 0;
  SettleDamping settle_;
  double per_step_exchange_ms_ = -1;  // as last measured at H 1 (< 0: never)
  bool lossless_ = true;              // the encoding since ForgetExchange is none
  int last_direction_ = 0;            // of the last change: +1 up, -1 down
  // Since the last change: time in rounds, and the latest rounds' own
  // measurements (since the last ForgetExchange too), newest at next - 1.
  struct ChangeDamping {
    static constexpr int kWindow = 5;
    double dwell_ms = 0;
    std::array<double, kWindow> exchange_ms{}, step_compute_ms{};
    int next = 0, count = 0;
    void Add(double exchange, double step_compute);
    // Of the `count` rounds held.
    double Median(const std::array<double, kWindow>& values) const;
  };
  ChangeDamping damping_;
};

}  // namespace mt
