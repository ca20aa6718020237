// Who takes part in a round, among the workers present. A device so slow
// that even its smallest batch outlasts the others' whole round makes every
// round wait for it: a phone 20 times slower than its partner, at the 8
// samples local steps take, held each round for 94 ms where the partner
// needed 22, and the pair trained at a sixth of the fast phone alone
// (issue 43). Such a device is set aside: it stays connected and is sent
// nothing until it is brought back.
//
// The verdict is the balanced round's predicted time (BatchController::
// PredictRoundMs, from the measured per-sample times and exchange
// overheads) with and without the worker, for the same global batch: set
// aside when the round without it is shorter by more than kMargin and by
// kMinSavingMs in kSettleRounds rounds running, the worker whose absence
// shortens it most first. The margin is wide (the round at least twice as
// fast without it), so a device that is merely slower, or one whose
// estimate a busy moment inflated, keeps its place: beside a 1x phone, a
// 5x or 10x phone still shortens their rounds or costs little and is kept,
// a 20x one (4x longer rounds) is set aside. It comes back when the prediction with its last
// estimates says it would pay again (the others slowed down), and is tried again after
// kRecheckRounds rounds, twice as long each time it proves hopeless again
// (up to kMaxRecheckRounds), since a phone's speed changes (charging,
// cooling, another app) and its estimate ages.
//
// Transport-free and clock-free: rounds are counted by Choose.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "hub/policy/batch_controller.h"

namespace mt {

class Attendance {
 public:
  static constexpr double kMargin = 1.0;
  static constexpr double kMinSavingMs = 2;
  static constexpr int kSettleRounds = 3;
  static constexpr int kRecheckRounds = 32;
  static constexpr int kMaxRecheckRounds = 512;
  // A trial: its estimates are dropped (they aged), so it is judged again
  // from scratch: a round with the full model and one measured round, then
  // kSettleRounds.
  static constexpr int kTrialRounds = kSettleRounds + 2;

  using Member = BatchController::Member;
  // The balanced round's time for these members (< 0: not all measured).
  using Predict = std::function<double(const std::vector<Member>& members)>;

  struct Changes {
    std::vector<int> set_aside;     // worker ids set aside this round
    std::vector<int> brought_back;  // and brought back
    std::vector<int> remeasure;     // of those, tried again: measure anew (BatchController::Forget)
  };

  // Once per round: of the workers `present`, those that take part, in
  // their order. Never fewer than `min_members` (nor than one) take part.
  std::vector<Member> Choose(const std::vector<Member>& present, int min_members,
                             const Predict& predict, Changes* changes);
  bool set_aside(int worker) const;
  // A worker that left: measured anew if it returns.
  void Forget(int worker) { workers_.erase(worker); }
  int64_t rounds() const { return rounds_; }

 private:
  struct WorkerState {
    bool aside = false;
    int strikes = 0;               // rounds running in which the group was faster without it
    int64_t aside_at = 0;          // the round it was set aside in
    int recheck = kRecheckRounds;  // rounds aside before it is tried again
  };

  int64_t rounds_ = 0;
  std::map<int, WorkerState> workers_;
};

}  // namespace mt
