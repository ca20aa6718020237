// The residual sketch's seed (hub/aggregation/sketch_seed.h): each hub
// draws its own, where every hub used 0x5eed before (issue 45), and a test
// that must repeat a run names one.
#include "hub/aggregation/sketch_seed.h"

#include <gtest/gtest.h>

#include <set>

namespace mt {
namespace {

TEST(SketchSeed, EachHubDrawsItsOwnAndATestCanNameOne) {
  EXPECT_EQ(SketchSeedOf(42u), 42u);
  EXPECT_EQ(SketchSeedOf(0x5eedu), 0x5eedu);
  std::set<uint32_t> drawn;
  for (int i = 0; i < 8; ++i) drawn.insert(SketchSeedOf(std::nullopt));
  // Eight 32-bit draws from the CSPRNG: all equal with odds of 2^-224.
  EXPECT_GT(drawn.size(), 1u);
  EXPECT_EQ(drawn.count(0x5eedu), 0u);
}

}  // namespace
}  // namespace mt
