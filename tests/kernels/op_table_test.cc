// The op table (kernels/op_table.h): ops a kernel file registers for a
// backend class, called through keys. What placement relies on: a table op
// is in SupportedOps() exactly where a function is registered for the
// backend's class or a base of it, a backend without one (or one that
// leaves it out) throws UnsupportedOp naming it, and a key whose signature
// differs from the kernel's throws instead of calling. Tried on the row
// scale (kernels/cpu/ops/row_scale.cc): a test op of its own would be an op
// the CPU backend lacks in every other test of this binary.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/op_table.h"
#include "tests/kernels/cpu_test_util.h"
#include "tests/kernels/row_scale_op.h"
#include "tests/support/test_backends.h"

namespace mt::kernels {
namespace {

using test_support::kRowScaleBackward;
using test_support::kRowScaleForward;
using test_support::MakeBuffer;
using test_support::ToHost;

// A class derived from CpuBackend: the CPU's table ops serve it too.
struct TunedCpu : CpuBackend {
  TunedCpu() : CpuBackend(1) {}
  std::string Name() const override { return "tuned_cpu"; }
};

TEST(OpTable, AKeyAndItsKernelMeetByName) {
  // Another key of the same name is the same op, an id past the enum's.
  EXPECT_EQ((TableOp<void(View, View, View, int, int)>{"row_scale_forward"}.op()),
            kRowScaleForward.op());
  EXPECT_NE(kRowScaleForward.op(), kRowScaleBackward.op());
  EXPECT_GE(static_cast<int>(kRowScaleForward.op()), kOpCount);
  EXPECT_LT(static_cast<int>(kRowScaleForward.op()), OpCount());
  EXPECT_STREQ(OpName(kRowScaleForward.op()), "row_scale_forward");
  EXPECT_TRUE(OpSet::All().Has(kRowScaleBackward.op()));
}

TEST(OpTable, SupportedWhereRegisteredForTheClassOrABase) {
  TunedCpu tuned;
  test_support::BareBackend bare;
  EXPECT_TRUE(tuned.SupportedOps().Has(kRowScaleForward.op()));
  EXPECT_FALSE(bare.SupportedOps().Has(kRowScaleForward.op()));
  EXPECT_TRUE(TableOpsOf(bare).empty());

  auto x = MakeBuffer(tuned, {1, 2, 3, 4});
  auto s = MakeBuffer(tuned, {2, -1});
  auto out = tuned.Allocate(4);
  kRowScaleForward(tuned, WholeOf(*x), WholeOf(*s), WholeOf(*out), 2, 2);
  EXPECT_EQ(ToHost(tuned, *out), (std::vector<float>{2, 4, -3, -4}));
}

TEST(OpTable, ABackendWithoutTheOpThrowsNamingIt) {
  test_support::BareBackend bare;
  auto x = MakeBuffer(bare, {1, 2});
  auto out = MakeBuffer(bare, {7, 7});
  try {
    kRowScaleForward(bare, WholeOf(*x), WholeOf(*x), WholeOf(*out), 2, 1);
    ADD_FAILURE() << "a backend without the row scale ran it";
  } catch (const UnsupportedOp& e) {
    EXPECT_NE(std::string(e.what()).find("row_scale_forward"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bare"), std::string::npos) << e.what();
  }
  EXPECT_EQ(ToHost(bare, *out), (std::vector<float>{7, 7}));
  // A backend of the right class that leaves the op out refuses it as well.
  const std::unique_ptr<Backend> limited =
      mt::test_support::MakeCpuWithout({kRowScaleForward.op()}, "cpu_without_row_scale");
  auto y = limited->Allocate(2);
  auto z = limited->Allocate(2);
  EXPECT_THROW(kRowScaleForward(*limited, WholeOf(*y), WholeOf(*y), WholeOf(*z), 2, 1),
               UnsupportedOp);
}

TEST(OpTable, AKeyWithAnotherSignatureThrowsRatherThanCalls) {
  CpuBackend cpu(1);
  auto x = MakeBuffer(cpu, {1, 2});
  auto out = MakeBuffer(cpu, {7, 7});
  const TableOp<void(View, View, View, int64_t, int)> wrong{"row_scale_forward"};
  EXPECT_THROW(wrong(cpu, WholeOf(*x), WholeOf(*x), WholeOf(*out), 2, 1), std::logic_error);
  EXPECT_EQ(ToHost(cpu, *out), (std::vector<float>{7, 7}));
}

TEST(OpTable, ANameOfABackendMethodIsNotATableOp) {
  EXPECT_THROW((TableOp<void(View)>{"relu_forward"}), std::logic_error);
}

}  // namespace
}  // namespace mt::kernels
