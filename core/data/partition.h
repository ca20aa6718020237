// Splitting one dataset the way phones hold data: each device its own
// samples, in different class proportions (non-IID). The hub draws the
// split (floating point, once); each worker is sent its share of every
// class as integers and picks the same samples from them anywhere
// (PartitionIndices), so no libm difference between devices can move one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mt {

struct PartitionSpec {
  enum class Kind { kIid, kDirichlet, kClasses };
  Kind kind = Kind::kIid;
  double alpha = 0;  // kDirichlet: smaller is more skewed (0.1: mostly one class or two)
  int classes = 0;   // kClasses: each worker holds this many classes
  // "iid", "dirichlet:0.5", "classes:2".
  std::string ToString() const;
};
// Throws std::invalid_argument with what is wrong.
PartitionSpec ParsePartition(const std::string& text);

// One worker's share: for each class, where in the class's fixed shuffle
// (ClassOrder) its samples start and how many it takes.
struct ClassShare {
  std::vector<uint32_t> start, count;  // one per class
  uint64_t total() const;
};

// Every worker's share of `labels` (values in [0, classes)), drawn from
// `seed`: IID deals each class out evenly; Dirichlet splits each class by
// proportions drawn from Dir(alpha) over the workers; classes:K gives each
// worker K classes (round-robin, so each class has holders) and splits a
// class evenly among its holders. Every sample goes to exactly one worker.
std::vector<ClassShare> DrawPartition(const std::vector<uint16_t>& labels, int classes, int workers,
                                      const PartitionSpec& spec, uint64_t seed);

// The samples of `share`: in integers only, the same on every device.
// Throws std::invalid_argument for a share that does not fit `labels`.
std::vector<uint32_t> PartitionIndices(const std::vector<uint16_t>& labels, int classes,
                                       const ClassShare& share, uint64_t seed);

}  // namespace mt
