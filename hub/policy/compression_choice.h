// How rounds encode what they exchange (--compress): fixed, or automatic.
// With auto the hub measures what an exchange costs at the current encoding
// against a step's compute (the same measurements as --sync-every auto,
// hub/policy/sync_period.h) and picks the least lossy encoding whose exchange would
// stay within kExchangeShare of a round of kRoundSteps steps, its cost
// predicted by the bytes each encoding sends:
//
//   none 4 bytes a value, fp16 2, int8 1 + 4/256, topk 20/256
//
// The prediction is a line, exchange = latency + per byte * bytes, fitted
// to the encodings measured so far: from one, all of the exchange is taken
// as bytes, so a slow link tries a stronger encoding; once a stronger one
// has shown that fewer bytes did not make the exchange shorter (a link
// whose cost is latency), none is as good as any, and the choice goes back
// to it.
//
// On a fast network (an exchange under kFastExchangeMs, as on loopback or a
// wired LAN) that is none: exact, and as fast as without the choice. Over
// Wi-Fi the exchange of LeNet-5 by three phones costs hundreds of
// milliseconds uncompressed, and the choice moves to int8 or topk, so that
// --sync-every auto then needs fewer local steps to hide what is left
// (long rounds cost accuracy; docs/benchmarks.md).
//
// Unlike SyncPeriod, an encoding's exchange is the median of its latest
// rounds (up to kRecentRounds), not a running mean: a round's exchange is
// either about its bytes' time or that plus a ~200 ms retransmission or a
// one-off cost (the first round after a change still brings the previous
// round's result at the old encoding), and averaged in, one such round made
// topk look slower than int8 and sent three phones back to int8 for 200
// steps (1.4x one phone alone where the same seed's settled runs gave 1.8-2x).
//
// Like SyncPeriod: a change only after
// kSettleRounds rounds at the current encoding, and a move back to a less
// lossy one only when its predicted exchange is within half the budget, so
// noise does not make it oscillate; changes that undo each other make the
// next decision wait longer (hub/policy/settle_damping.h). Transport-free and
// clock-free.
#pragma once

#include <cstdint>
#include <optional>

#include "core/compress/gradient_codec.h"
#include "hub/policy/settle_damping.h"
#include "hub/policy/sync_period.h"

namespace mt {

class CompressionChoice {
 public:
  // SyncPeriod's: an exchange this fast is not worth any loss, and the
  // share of a round it may take.
  static constexpr double kFastExchangeMs = SyncPeriod::kFastExchangeMs;
  static constexpr double kExchangeShare = SyncPeriod::kExchangeShare;
  // The round, in local steps, whose compute the exchange is held against:
  // rounds this short kept accuracy within a point of one device alone.
  static constexpr int kRoundSteps = 4;
  static constexpr int kSettleRounds = SettleDamping::kMin;
  static constexpr int kMaxSettleRounds = SettleDamping::kMax;
  // An exchange this many times over the budget is left after one round:
  // over Wi-Fi the first uncompressed rounds of three phones took 370 ms
  // against a 20 ms budget, and waiting out the settle rounds cost the run
  // a second for no doubt to remove.
  static constexpr double kFarOverBudget = 8;
  // Another encoding's figure older than this many rounds no longer enters
  // the line fit: the link it measured may be gone. (An uncompressed figure
  // from a pair's first steps, next to one slow round at topk 300 steps
  // later, read as "bytes cost nothing" and sent the run back to none.)
  static constexpr int64_t kFigureLifetimeRounds = 50;
  // Where no encoding brings the exchange within the budget, one whose
  // predicted exchange is within this factor of the best does as well.
  static constexpr double kNearBest = 1.25;
  static constexpr int kEncodings = 4;
  static constexpr int kRecentRounds = 5;

  // A fixed encoding; nullopt: automatic, starting at none. For the first
  // `warmup_steps` steps of the run no encoding lossier than fp16 is used
  // (mthub --compress-warmup): compressing from the first step costs
  // accuracy that later steps do not win back (PowerSGD's practice).
  explicit CompressionChoice(std::optional<Compression> fixed, int64_t warmup_steps = 0);

  bool automatic() const { return automatic_; }
  // The encoding of the step AtStep last named.
  Compression current() const { return Capped(current_); }
  // The step about to be planned: ends the warm-up once past it.
  void AtStep(int64_t step) { warming_ = step < warmup_steps_; }
  bool warming_up() const { return warming_; }

  // A round in which every participant finished, exchanged at current():
  // its exchange and one step's compute, in milliseconds. Returns whether
  // current() changed.
  bool Observe(double exchange_ms, double step_compute_ms);

  // Rounds the next decision waits for at the current encoding.
  int settle_rounds() const { return settle_.rounds(); }
  // The running estimates behind the last decision (< 0: none yet): the
  // exchange at current(), and one step's compute.
  double exchange_ms() const;
  double step_compute_ms() const { return step_compute_ms_; }
  // The exchange the round may take (milliseconds), from the compute.
  double BudgetMs() const;
  // What the last change was decided on: the exchange at the encoding it
  // left, and the budget.
  double decided_exchange_ms() const { return decided_exchange_ms_; }
  double decided_budget_ms() const { return decided_budget_ms_; }

 private:
  struct LinkModel {
    double latency_ms, ms_per_byte;  // per byte a value takes
  };
  static double BytesPerValue(Compression c);
  // `c`, or fp16 where c is lossier and the warm-up runs.
  Compression Capped(Compression c) const;
  LinkModel Fit() const;
  Compression Target() const;

  bool automatic_;
  Compression current_;
  int64_t warmup_steps_;
  bool warming_;
  double measured_ms_[kEncodings];      // each encoding's exchange, as last measured
  int64_t measured_round_[kEncodings];  // the round (rounds_seen_) it was measured in
  int64_t rounds_seen_ = 0;
  double step_compute_ms_ = -1;
  int rounds_at_current_ = 0;
  double recent_ms_[kRecentRounds];  // the latest exchanges at current_, oldest overwritten
  SettleDamping settle_;
  std::optional<Compression> left_;  // what the last change moved away from
  double decided_exchange_ms_ = -1, decided_budget_ms_ = -1;
};

}  // namespace mt
