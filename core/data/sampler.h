// Which samples go where: a seeded shuffle per epoch that every device
// computes identically, and contiguous shards of it for the workers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace mt {

// A permutation of [0, n) that depends only on (seed, epoch).
std::vector<uint32_t> EpochOrder(size_t n, uint64_t seed, int64_t epoch);

// [begin, end) of shard `index` of `count` near-equal contiguous shards of n.
std::pair<size_t, size_t> ShardRange(size_t n, int index, int count);

}  // namespace mt
