#include "hub/policy/short_rounds.h"

#include <algorithm>
#include <cstddef>

namespace mt {
namespace {

// The smallest batch from `batch` on that makes batch * steps a multiple
// of the round's steps; 0 when it would train more than the worker's share.
int WholeBatch(int batch, int steps, int round_steps) {
  for (int b = batch; b < batch + round_steps; ++b)
    if ((static_cast<long long>(b) * steps) % round_steps == 0)
      return static_cast<long long>(b) * steps <= static_cast<long long>(batch) * round_steps ? b
                                                                                              : 0;
  return 0;
}

}  // namespace

std::vector<RoundShare> ShortenSlowRounds(const ShortRoundInputs& in) {
  const size_t n = in.batches.size();
  std::vector<RoundShare> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = {in.batches[i], in.steps};
  if (in.steps <= 1 || n < 2) return out;
  for (size_t i = 0; i < n; ++i)
    if (in.ms_per_sample[i] <= 0 || in.overhead_ms[i] < 0) return out;  // not measured yet
  auto round_ms = [&](size_t i, int batch, int steps) {
    return in.overhead_ms[i] + steps * in.ms_per_sample[i] * batch;
  };
  // The others' round: the longest of the workers above the floor.
  double others_ms = -1;
  int fastest = -1;
  for (size_t i = 0; i < n; ++i) {
    if (in.batches[i] <= in.min_batch) continue;
    others_ms = std::max(others_ms, round_ms(i, in.batches[i], in.steps));
    if (fastest < 0 || in.ms_per_sample[i] < in.ms_per_sample[static_cast<size_t>(fastest)])
      fastest = static_cast<int>(i);
  }
  if (fastest < 0) return out;
  int moved = 0;  // samples a step the short workers leave
  for (size_t i = 0; i < n; ++i) {
    const int b = in.batches[i];
    if (b > in.min_batch || round_ms(i, b, in.steps) <= (1 + kShortRoundSlack) * others_ms)
      continue;
    RoundShare best{0, 0};
    for (int steps = in.steps - 1; steps >= 1; --steps) {
      const int whole = WholeBatch(b, steps, in.steps);
      if (whole == 0) continue;
      best = {whole, steps};  // the shortest so far: one step at worst
      if (round_ms(i, whole, steps) <= others_ms) break;
    }
    if (best.steps == 0) continue;
    moved += b - best.batch * best.steps / in.steps;
    out[i] = best;
  }
  RoundShare& fast = out[static_cast<size_t>(fastest)];
  if (moved == 0 || fast.batch + moved > in.caps[static_cast<size_t>(fastest)]) {
    for (size_t i = 0; i < n; ++i) out[i] = {in.batches[i], in.steps};
    return out;
  }
  fast.batch += moved;
  return out;
}

}  // namespace mt
