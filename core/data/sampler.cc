#include "core/data/sampler.h"

#include <numeric>
#include <stdexcept>

#include "core/util/rng.h"

namespace mt {

std::vector<uint32_t> EpochOrder(size_t n, uint64_t seed, int64_t epoch) {
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  Rng rng(seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(epoch) + 1);
  for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.Below(i)]);
  return order;
}

std::pair<size_t, size_t> ShardRange(size_t n, int index, int count) {
  if (count <= 0 || index < 0 || index >= count)
    throw std::invalid_argument("ShardRange: bad shard index");
  const size_t base = n / count, extra = n % count;
  const size_t i = static_cast<size_t>(index);
  const size_t begin = i * base + std::min(i, extra);
  return {begin, begin + base + (i < extra ? 1 : 0)};
}

}  // namespace mt
