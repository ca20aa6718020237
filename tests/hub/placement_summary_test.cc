// The hub's log line of a worker's placement: counted per device, and
// nothing at all (info level) where every layer runs on the CPU.
#include "hub/membership/placement_summary.h"

#include <gtest/gtest.h>

namespace mt {
namespace {

TEST(PlacementSummary, AllOnTheCpuSaysNothing) {
  EXPECT_EQ(PlacementSummary(""), "");
  EXPECT_EQ(PlacementSummary("conv1:cpu,relu1:cpu,pool1:cpu,fc1:cpu"), "");
}

TEST(PlacementSummary, MixedOrOffTheCpuCountsLayersPerDevice) {
  EXPECT_EQ(PlacementSummary("conv1:opencl,relu1:opencl,fc1:cpu,fc2:opencl"), "opencl 3, cpu 1");
  EXPECT_EQ(PlacementSummary("conv1:opencl,fc1:opencl"), "opencl 2");
  // A long model's list is not cut: it becomes two numbers.
  std::string many;
  for (int i = 0; i < 200; ++i)
    many +=
        (i ? "," : "") + std::string("layer") + std::to_string(i) + (i % 4 ? ":opencl" : ":cpu");
  EXPECT_EQ(PlacementSummary(many), "cpu 50, opencl 150");
}

}  // namespace
}  // namespace mt
