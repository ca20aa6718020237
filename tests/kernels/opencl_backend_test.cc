// What is particular to the OpenCL backend: memory ops on views at offsets,
// its errors, and the bounded conv workspace. Its ops against the CPU
// backend are in backend_ops_test.cc. Skips, saying why, when the machine
// has no OpenCL platform.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_backend.h"
#include "tests/kernels/cpu_test_util.h"
#include "tests/kernels/row_scale_op.h"

#ifdef MT_HAVE_OPENCL
#include "kernels/half_storage.h"
#include "kernels/opencl/opencl_backend.h"
#include "kernels/opencl/opencl_device.h"
#endif

namespace mt::kernels {
namespace {

using test_support::MakeBuffer;
using test_support::MakeIntBuffer;
using test_support::RandomVector;
using test_support::ToHost;

#ifndef MT_HAVE_OPENCL
TEST(OpenClBackend, Skipped) {
  GTEST_SKIP() << "this build has no OpenCL backend (OpenCL or CLBlast not found)";
}
#else

class OpenClBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto devices = ListOpenClDevices();
    if (devices.empty()) GTEST_SKIP() << "no OpenCL platform on this machine";
    gpu_ = std::make_unique<OpenClBackend>(DefaultOpenClDevice());
  }

  CpuBackend cpu_{2};
  std::unique_ptr<OpenClBackend> gpu_;
};

// Every op but those with CPU kernels only: the activation family, issue
// 29's structural ops (a backend's kernel is optional: placement runs the
// layers that need them on the CPU) and issue 47's 16-bit storage (an
// OpenCL backend keeps its activations in floats).
TEST_F(OpenClBackendTest, NameAndEveryOpButTheCpuOnlyOnes) {
  EXPECT_EQ(gpu_->Name(), "opencl");
  const OpSet cpu_only = {Op::kActivationForward,
                          Op::kActivationBackward,
                          Op::kPaddedPool,
                          test_support::kRowScaleForward.op(),
                          test_support::kRowScaleBackward.op(),
                          kPackHalves.op(),
                          kUnpackHalves.op()};
  EXPECT_EQ(gpu_->SupportedOps(), OpSet::All() - cpu_only)
      << "lacks " << (OpSet::All() - gpu_->SupportedOps()).Names();
}

TEST_F(OpenClBackendTest, MemoryOpsRespectViewOffsets) {
  const auto host = RandomVector(100, 1);
  std::vector<float> want(100, 0.0f);
  std::copy(host.begin() + 3, host.begin() + 43, want.begin() + 50);
  std::fill(want.begin() + 10, want.begin() + 17, 2.5f);
  for (Backend* be : {static_cast<Backend*>(&cpu_), static_cast<Backend*>(gpu_.get())}) {
    auto src = MakeBuffer(*be, host);
    auto dst = be->Allocate(100);  // zero-filled
    be->Copy(WholeOf(*src).Slice(3, 40), WholeOf(*dst).Slice(50, 40));
    be->Fill(WholeOf(*dst).Slice(10, 7), 2.5f);
    EXPECT_EQ(ToHost(*be, *dst), want) << be->Name();
    std::vector<float> part(9);
    be->Download(WholeOf(*src).Slice(91, 9), part.data());
    EXPECT_EQ(part, std::vector<float>(host.begin() + 91, host.end())) << be->Name();
  }
}

TEST_F(OpenClBackendTest, SoftmaxCrossEntropyRejectsALabelOutOfRange) {
  auto logits = gpu_->Allocate(20);
  std::vector<int32_t> labels = {3, 10};
  auto lab = MakeIntBuffer(*gpu_, labels);
  auto d = gpu_->Allocate(20);
  EXPECT_THROW(gpu_->SoftmaxCrossEntropy(WholeOf(*logits), WholeOf(*lab), 2, 10, WholeOf(*d)),
               std::out_of_range);
}

TEST_F(OpenClBackendTest, ConvWorkspaceIsBoundedSoBigBatchesRunInGroups) {
  // backend_ops_test's mentee_conv2_in_groups: its columns do not fit the
  // workspace at once, so the conv runs in groups, the last one partial.
  const ConvGeometry g{14, 32, 32, 32, 32, 3, 1, 1};
  const size_t whole_batch = size_t(g.batch) * (g.patch() + g.out_c) * g.out_h() * g.out_w();
  EXPECT_LT(gpu_->ConvWorkspaceCount(g), whole_batch);
  EXPECT_NE(whole_batch % gpu_->ConvWorkspaceCount(g), 0u);
}

TEST(OpenClError, NamesTheCallTheDeviceAndTheCode) {
  const OpenClError e("clCreateBuffer", "Test Device", CL_MEM_OBJECT_ALLOCATION_FAILURE);
  EXPECT_STREQ(e.what(), "clCreateBuffer on Test Device: CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)");
}

#endif  // MT_HAVE_OPENCL

}  // namespace
}  // namespace mt::kernels
