// Splitting one dataset among workers as phones hold data: every sample
// to exactly one worker, the skew each spec asks for, and the same samples
// from the same integers on every device.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/data/partition.h"
#include "core/util/rng.h"

namespace mt {
namespace {

std::vector<uint16_t> Labels(size_t n, int classes, uint64_t seed) {
  Rng rng(seed);
  std::vector<uint16_t> l(n);
  for (auto& v : l) v = static_cast<uint16_t>(rng.Below(static_cast<uint64_t>(classes)));
  return l;
}

// Each worker's indices; checks they tile the dataset.
std::vector<std::vector<uint32_t>> Tile(const std::vector<uint16_t>& labels, int classes,
                                        int workers, const std::string& spec) {
  const auto shares = DrawPartition(labels, classes, workers, ParsePartition(spec), 7);
  std::vector<std::vector<uint32_t>> out;
  std::vector<int> seen(labels.size(), 0);
  for (const ClassShare& s : shares) {
    out.push_back(PartitionIndices(labels, classes, s, 7));
    EXPECT_EQ(out.back().size(), s.total());
    EXPECT_GT(s.total(), 0u) << spec;
    for (uint32_t i : out.back()) {
      ++seen[i];
      EXPECT_EQ(s.count[labels[i]] > 0, true);
    }
  }
  for (int s : seen) EXPECT_EQ(s, 1) << spec << ": a sample held by " << s << " workers";
  return out;
}

int ClassesHeld(const std::vector<uint32_t>& indices, const std::vector<uint16_t>& labels,
                double min_share) {
  std::vector<int> n(16, 0);
  for (uint32_t i : indices) ++n[labels[i]];
  int held = 0;
  for (int c : n) held += c >= min_share * static_cast<double>(indices.size());
  return held;
}

TEST(Partition, EverySampleGoesToExactlyOneWorkerWithTheSkewAsked) {
  const auto labels = Labels(6000, 10, 1);
  for (const auto& w : Tile(labels, 10, 3, "iid")) {
    EXPECT_NEAR(static_cast<double>(w.size()), 2000, 10);
    EXPECT_EQ(ClassesHeld(w, labels, 0.05), 10);
  }
  for (const auto& w : Tile(labels, 10, 5, "classes:2"))
    EXPECT_EQ(ClassesHeld(w, labels, 0.0001), 2);
  // Dirichlet 0.1: a worker's largest class is on average over a third of
  // its samples (IID: a tenth); 100: near IID.
  double largest = 0;
  for (const auto& w : Tile(labels, 10, 8, "dirichlet:0.1")) {
    std::vector<double> n(10, 0);
    for (uint32_t i : w) ++n[labels[i]];
    largest += *std::max_element(n.begin(), n.end()) / static_cast<double>(w.size()) / 8;
  }
  EXPECT_GT(largest, 0.35);
  for (const auto& w : Tile(labels, 10, 8, "dirichlet:100"))
    EXPECT_EQ(ClassesHeld(w, labels, 0.05), 10);
}

TEST(Partition, TheSameSeedDrawsTheSameShares) {
  const auto labels = Labels(3000, 10, 2);
  const auto a = DrawPartition(labels, 10, 4, ParsePartition("dirichlet:0.5"), 3);
  const auto b = DrawPartition(labels, 10, 4, ParsePartition("dirichlet:0.5"), 3);
  const auto c = DrawPartition(labels, 10, 4, ParsePartition("dirichlet:0.5"), 4);
  for (size_t w = 0; w < a.size(); ++w) {
    EXPECT_EQ(a[w].count, b[w].count);
    EXPECT_EQ(PartitionIndices(labels, 10, a[w], 3), PartitionIndices(labels, 10, b[w], 3));
  }
  bool differs = false;
  for (size_t w = 0; w < a.size(); ++w) differs |= a[w].count != c[w].count;
  EXPECT_TRUE(differs);
}

TEST(Partition, SpecsParseAndImpossibleOnesAreRefused) {
  EXPECT_EQ(ParsePartition("dirichlet:0.5").ToString(), "dirichlet:0.5");
  EXPECT_EQ(ParsePartition("classes:3").classes, 3);
  for (const char* bad : {"", "noniid", "dirichlet", "dirichlet:0", "dirichlet:-1", "dirichlet:x",
                          "classes:0", "classes:2.5", "iid:1"})
    EXPECT_THROW(ParsePartition(bad), std::invalid_argument) << bad;
  // A share whose starts and counts differ in length (a hostile hub's) is refused.
  ClassShare odd;
  odd.start = {0};
  odd.count = {1, 1};
  EXPECT_THROW(PartitionIndices(Labels(100, 2, 1), 2, odd, 1), std::invalid_argument);
  // Two workers of one class each cannot hold ten classes.
  EXPECT_THROW(DrawPartition(Labels(100, 10, 1), 10, 2, ParsePartition("classes:1"), 1),
               std::invalid_argument);
}

}  // namespace
}  // namespace mt
