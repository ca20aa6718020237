#include "hub/batch_split.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace mt {

std::vector<int> SplitBatch(int total, const std::vector<double>& weights) {
  const int n = static_cast<int>(weights.size());
  std::vector<int> out(n, 0);
  if (n == 0 || total <= 0) return out;
  const int floor_each = total >= n ? 1 : 0;
  const int spread = total - floor_each * n;
  double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<double> w = weights;
  if (!(sum > 0)) {
    std::fill(w.begin(), w.end(), 1.0);
    sum = n;
  }
  std::vector<std::pair<double, int>> remainders;
  int given = 0;
  for (int i = 0; i < n; ++i) {
    const double exact = spread * (w[i] / sum);
    const int whole = static_cast<int>(std::floor(exact));
    out[i] = floor_each + whole;
    given += whole;
    remainders.emplace_back(exact - whole, i);
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (int k = 0; given < spread; ++k, ++given) ++out[remainders[k % n].second];
  return out;
}

}  // namespace mt
