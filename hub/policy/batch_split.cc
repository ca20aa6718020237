#include "hub/policy/batch_split.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace mt {
namespace {

// Real-valued shares of `total` in proportion to w, none above its cap:
// a capped worker keeps its cap and the rest is shared again among the
// others (water filling).
std::vector<double> CappedShares(double total, std::vector<double> w,
                                 const std::vector<double>& cap) {
  const size_t n = w.size();
  std::vector<double> out(n, 0.0);
  std::vector<bool> fixed(n, false);
  for (;;) {
    double rest = total, sum = 0;
    for (size_t i = 0; i < n; ++i) {
      if (fixed[i])
        rest -= out[i];
      else
        sum += w[i];
    }
    bool changed = false;
    for (size_t i = 0; i < n; ++i) {
      if (fixed[i]) continue;
      out[i] = sum > 0 ? rest * w[i] / sum : 0;
      if (out[i] > cap[i]) {
        out[i] = cap[i];
        fixed[i] = true;
        changed = true;
      }
    }
    if (!changed) return out;
  }
}

}  // namespace

std::vector<int> SplitBatch(int total, const std::vector<double>& targets,
                            const std::vector<int>& caps) {
  const int n = static_cast<int>(targets.size());
  std::vector<int> out(n, 0);
  if (n == 0 || total <= 0) return out;
  std::vector<double> cap(n, std::numeric_limits<double>::infinity());
  int64_t cap_sum = 0;
  for (int i = 0; i < n; ++i) {
    const int c = caps.empty() ? total : std::max(0, caps[i]);
    cap[i] = c;
    cap_sum += c;
  }
  const int goal = static_cast<int>(std::min<int64_t>(total, cap_sum));
  // Everyone who can gets one sample first, so no worker idles for a step.
  const int floor_each = goal >= n ? 1 : 0;
  std::vector<double> w(targets);
  for (auto& x : w) x = std::isfinite(x) && x > 0 ? x : 0;
  if (std::accumulate(w.begin(), w.end(), 0.0) <= 0) std::fill(w.begin(), w.end(), 1.0);
  std::vector<double> room(n);
  int spread = goal;
  for (int i = 0; i < n; ++i) {
    const int f = std::min(floor_each, static_cast<int>(cap[i]));
    out[i] = f;
    spread -= f;
    room[i] = cap[i] - f;
  }
  // Shares in proportion to the targets beyond the floor, so that targets
  // of 85:85:21 give back 85:85:21 rather than 84:84:20 plus a remainder.
  const double w_sum = std::accumulate(w.begin(), w.end(), 0.0);
  std::vector<double> want(n);
  for (int i = 0; i < n; ++i) want[i] = std::max(0.0, w[i] / w_sum * goal - out[i]);
  if (std::accumulate(want.begin(), want.end(), 0.0) <= 0) want = w;
  const std::vector<double> exact = CappedShares(spread, want, room);
  std::vector<std::pair<double, int>> remainders;
  int given = 0;
  for (int i = 0; i < n; ++i) {
    const int whole = static_cast<int>(std::floor(exact[i] + 1e-9));
    out[i] += whole;
    given += whole;
    remainders.emplace_back(exact[i] - whole, i);
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  // Hand out what rounding left, largest remainder first, to workers with room.
  for (int pass = 0; given < spread && pass < 2; ++pass)
    for (const auto& r : remainders) {
      if (given == spread) break;
      const int i = r.second;
      if (out[i] < cap[i]) {
        ++out[i];
        ++given;
      }
    }
  return out;
}

}  // namespace mt
