// How many rounds an automatic choice of the hub (--sync-every auto,
// hub/policy/sync_period.h; --compress auto, hub/policy/compression_choice.h) measures at
// its current value before it may decide again. Each choice says what
// undoing its last change means; the waiting is the same for both: a
// change that undoes the one before doubles it, up to kMax, so noise that
// gets past their hysteresis costs a few changes rather than one per
// settle period (a pair with a 5x-slower phone had changed encoding 10
// times in 120 steps, and H between 1 and 4 nine times in 436), and a
// quiet spell of twice the wait halves it again, down to kMin.
#pragma once

#include <algorithm>

namespace mt {

class SettleDamping {
 public:
  static constexpr int kMin = 3;
  static constexpr int kMax = 24;

  // Rounds the next decision waits for at the current value.
  int rounds() const { return rounds_; }
  // A decision after `rounds_at_current` rounds kept the value.
  void Kept(int rounds_at_current) {
    if (rounds_at_current % (2 * rounds_) == 0) rounds_ = std::max(kMin, rounds_ / 2);
  }
  // The value changed; `undoes_last`: back the way the last change came.
  void Changed(bool undoes_last) {
    if (undoes_last) rounds_ = std::min(kMax, 2 * rounds_);
  }

 private:
  int rounds_ = kMin;
};

}  // namespace mt
