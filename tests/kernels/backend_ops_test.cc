// Every op of every backend against the CPU backend on one thread, from one
// table of cases (after ggml's test-backend-ops; the table and the harness a
// case runs in are in backend_op_cases.h). Each backend runs every case it
// supports and must match the reference within the op's tolerance; cases it
// does not support are skipped and counted, and a backend lacking ops shows
// that they really are skipped (it throws if one is called).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/batch_norm_clip.h"
#include "kernels/batch_norm_replay.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/kernels/backend_op_cases.h"
#include "tests/kernels/cpu_test_util.h"
#include "tests/kernels/row_scale_op.h"
#include "tests/support/test_backends.h"

namespace mt::kernels {
namespace {

using test_support::AllCases;
using test_support::MaxRelativeError;
using test_support::OpCase;
using test_support::Output;
using test_support::RunCase;
using test_support::ToDouble;

// Max error relative to the largest magnitude of the reference tensor.
constexpr double kBitEqual = 0;     // the same arithmetic in the same order
constexpr double kRounding = 1e-6;  // a fused multiply-add's one rounding less
// Sums in another order, or OpenCL's exp, log, sqrt and division, which may
// be a few ulp off.
constexpr double kReordered = 1e-4;

double ToleranceOf(Op op) {
  if (op == test_support::kRowScaleForward.op()) return kBitEqual;
  if (op == test_support::kRowScaleBackward.op()) return kReordered;  // the scale's sums
  if (BatchNormClipOps().Has(op)) return kReordered;                  // as batch norm's
  if (op == kBatchNormReplay.op()) return kReordered;  // replays each backend's own statistics
  switch (op) {
    case Op::kScale:
    case Op::kAddBias:
    case Op::kMaxPoolForward:
    case Op::kReluForward:
    case Op::kReluBackward:
    case Op::kClipForward:
    case Op::kClipBackward:
    case Op::kAvgPoolForward:  // the same sums in the same order
    case Op::kGlobalAvgPoolBackward:
    case Op::kDropoutForward:
    case Op::kDropoutBackward:
    case Op::kArgmaxRows:
    case Op::kSgdUpdate: return kBitEqual;
    case Op::kActivationForward:  // exp and tanh may differ by an ulp
    case Op::kActivationBackward: return kReordered;
    case Op::kAxpy:  // CLBlast may fuse it
      return kRounding;
    case Op::kGemm:
    case Op::kConv2dForward:
    case Op::kConv2dBackward:
    case Op::kGroupedConv2d:
    case Op::kMaxPoolBackward:  // overlapping windows sum
    case Op::kAvgPoolBackward:  // likewise, and the CPU may fuse a multiply-add
    case Op::kGlobalAvgPoolForward:
    case Op::kBatchNormForwardTraining:
    case Op::kBatchNormForwardInference:
    case Op::kBatchNormBackward:
    case Op::kBiasGrad:
    case Op::kSoftmaxCrossEntropy:
    case Op::kAdamUpdate:
    case Op::kPaddedPool:  // sums over windows, as the unpadded pools
      return kReordered;
  }
  return kBitEqual;
}

// Empty when `got` matches `want` within `tolerance`, else what differs.
std::string Mismatch(const Output& got, const Output& want, double tolerance) {
  if (got.data.size() != want.data.size())
    return std::to_string(got.data.size()) + " values, the reference " +
           std::to_string(want.data.size());
  if (tolerance == kBitEqual || got.integers) {
    for (size_t i = 0; i < got.data.size(); ++i) {
      if (std::memcmp(&got.data[i], &want.data[i], sizeof(float)) == 0) continue;
      int32_t g = 0, w = 0;
      std::memcpy(&g, &got.data[i], sizeof g);
      std::memcpy(&w, &want.data[i], sizeof w);
      return "not bit-equal at " + std::to_string(i) + ": " +
             (got.integers ? std::to_string(g) + " vs " + std::to_string(w)
                           : std::to_string(got.data[i]) + " vs " + std::to_string(want.data[i]));
    }
    return "";
  }
  const double e = MaxRelativeError(got.data, ToDouble(want.data));
  return e <= tolerance
             ? ""
             : "relative error " + std::to_string(e) + " over " + std::to_string(tolerance);
}

struct Tally {
  int passed = 0, failed = 0;
  std::vector<const OpCase*> skipped;
};

// Runs every case `be` supports against the one-thread CPU reference.
Tally RunTable(Backend& be) {
  CpuBackend reference(1);
  Tally tally;
  for (const OpCase& c : AllCases()) {
    if (!be.SupportedOps().Contains(c.uses)) {
      tally.skipped.push_back(&c);
      continue;
    }
    std::string failure;
    try {
      const std::vector<Output> want = RunCase(c, reference), got = RunCase(c, be);
      for (size_t i = 0; i < want.size() && failure.empty(); ++i) {
        const std::string m = Mismatch(got[i], want[i], ToleranceOf(c.op));
        if (!m.empty()) failure = want[i].name + ": " + m;
      }
    } catch (const std::exception& e) {
      failure = std::string("threw: ") + e.what();
    }
    if (failure.empty()) {
      ++tally.passed;
    } else {
      ++tally.failed;
      ADD_FAILURE() << be.Name() << ", " << c.Name() << ": " << failure;
    }
  }
  std::string skipped;
  for (int i = 0; i < OpCount(); ++i) {
    const auto n = std::count_if(tally.skipped.begin(), tally.skipped.end(),
                                 [i](const OpCase* c) { return c->op == static_cast<Op>(i); });
    if (n)
      skipped += std::string(skipped.empty() ? "" : ", ") + OpName(static_cast<Op>(i)) + " " +
                 std::to_string(n);
  }
  std::printf("%s: %d cases passed, %d failed, %zu skipped%s (it lacks %s)\n", be.Name().c_str(),
              tally.passed, tally.failed, tally.skipped.size(),
              skipped.empty() ? "" : (": " + skipped).c_str(),
              be.SupportedOps() == OpSet::All()
                  ? "no op"
                  : (OpSet::All() - be.SupportedOps()).Names().c_str());
  ::testing::Test::RecordProperty("cases_passed", tally.passed);
  ::testing::Test::RecordProperty("cases_skipped", static_cast<int>(tally.skipped.size()));
  return tally;
}

// The CPU backend lacking two ops, one of them needed first by another
// op's cases (dropout backward runs dropout forward first).
constexpr OpSet kLimitedLacks{Op::kConv2dBackward, Op::kDropoutForward};

std::unique_ptr<Backend> BackendUnderTest(const std::string& name) {
  if (name == "limited_cpu") return mt::test_support::MakeCpuWithout(kLimitedLacks, "limited_cpu");
  return mt::test_support::MakeTestBackend(name);
}

class BackendOps : public ::testing::TestWithParam<std::string> {};

TEST_P(BackendOps, EverySupportedCaseMatchesTheCpuReference) {
  const std::unique_ptr<Backend> be = BackendUnderTest(GetParam());
  if (!be) GTEST_SKIP() << mt::test_support::kNoOpenCl;
  const Tally tally = RunTable(*be);
  EXPECT_GT(tally.passed, 0);
  // What SupportedOps() leaves out really is missing: calling it throws
  // (Backend's default, or the limited backend's guard) rather than
  // computing something placement would never have asked for.
  for (const OpCase* c : tally.skipped)
    EXPECT_THROW(RunCase(*c, *be), std::logic_error)
        << c->Name() << " skipped, but " << be->Name() << " ran it";
  if (GetParam() != "limited_cpu") return;
  // Skipped exactly where an op is missing: every case of a missing op, and
  // those that need one too (dropout backward runs dropout forward first, a
  // grouped conv case runs conv backward).
  size_t expected = 0;
  for (const OpCase& c : AllCases())
    expected += c.op == Op::kConv2dBackward || c.op == Op::kDropoutForward ||
                c.op == Op::kDropoutBackward || c.op == Op::kGroupedConv2d;
  EXPECT_EQ(tally.skipped.size(), expected);
  EXPECT_GT(expected, 0u);
}

INSTANTIATE_TEST_SUITE_P(Backends, BackendOps, ::testing::Values("cpu3", "opencl", "limited_cpu"),
                         [](const auto& info) { return info.param; });

// Table ops included.
TEST(BackendOpsTable, HasCasesForEveryOp) {
  EXPECT_GE(OpCount(), kOpCount + 2) << "the row scale's table ops are not registered";
  for (int i = 0; i < OpCount(); ++i) {
    const Op op = static_cast<Op>(i);
    size_t n = 0;
    for (const OpCase& c : AllCases()) n += c.op == op;
    EXPECT_GT(n, 0u) << OpName(op) << " has no case in the table";
  }
}

// LimitedBackend guards every op: a CPU backend lacking just that op throws
// on each of the op's cases, so no placement test passes by an op that
// quietly ran where it was said to be missing.
TEST(BackendOpsTable, LimitedBackendGuardsEveryOp) {
  for (int i = 0; i < OpCount(); ++i) {
    const Op op = static_cast<Op>(i);
    const std::unique_ptr<Backend> be =
        mt::test_support::MakeCpuWithout({op}, std::string("cpu_without_") + OpName(op));
    EXPECT_FALSE(be->SupportedOps().Has(op));
    for (const OpCase& c : AllCases()) {
      if (c.op != op) continue;
      EXPECT_THROW(RunCase(c, *be), std::logic_error) << be->Name() << ": " << c.Name();
    }
  }
}

// A backend that implements no numeric op at all is a valid backend: each
// op's default names the op and the backend.
TEST(BackendOpsTable, AnOpABackendDoesNotImplementThrowsNamingIt) {
  test_support::BareBackend bare;
  try {
    bare.ReluForward(View{}, View{});
    ADD_FAILURE() << "ReluForward did not throw";
  } catch (const UnsupportedOp& e) {
    EXPECT_NE(std::string(e.what()).find("bare does not implement relu_forward"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(bare.ConvWorkspaceCount(ConvGeometry{}), 0u);
}

}  // namespace
}  // namespace mt::kernels
