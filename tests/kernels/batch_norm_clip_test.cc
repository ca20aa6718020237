// Batch norm fused with a clip (kernels/batch_norm_clip.h) against the
// unfused sequence on the same backend: batch norm, ClipForward, then
// ClipBackward and batch norm's backward pass. Every backend (the CPU one
// on 1 and 3 threads, OpenCL where there is one) must give the same
// numbers bit for bit, with d_x written over d_y as the model calls it: the
// fused passes are the unfused ones' float operations in the same order, and
// the mask they form from x (the value before the clip, formed again) is the
// one ClipBackward takes from the clipped output.
//
// The one-pass replay of a training pass (kernels/batch_norm_replay.h)
// against that pass: from the same x, scale, shift and the statistics it
// saved, the replay must write its output bit for bit, clipped (ReLU6,
// ReLU) or not, on planes from 32x32 down to 1x1 and flat features, and
// leave the saved and running statistics as they are.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "kernels/backend.h"
#include "kernels/batch_norm_clip.h"
#include "kernels/batch_norm_replay.h"
#include "tests/kernels/cpu_test_util.h"
#include "tests/support/test_backends.h"

namespace mt::kernels {
namespace {

using test_support::RandomVector;

struct Case {
  int batch, channels, inner;
  float hi;  // the clip is [0, hi]
};

// Planes of 32x32, 16x16, 8x8 and 7x7 (partial vectors), flat features,
// and channels past a tile.
const Case kCases[] = {
    {4, 3, 1024, 6.0f}, {5, 20, 256, 6.0f},
    {3, 17, 64, 6.0f},  {4, 9, 49, std::numeric_limits<float>::infinity()},
    {16, 6, 1, 6.0f},   {2, 40, 9, std::numeric_limits<float>::infinity()},
};

struct Outputs {
  std::vector<float> y, d_x, d_scale, d_shift, saved, running;
};

class BatchNormClip : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    be_ = ::mt::test_support::MakeTestBackend(GetParam());
    if (!be_) GTEST_SKIP() << ::mt::test_support::kNoOpenCl;
    if (!be_->SupportedOps().Contains(BatchNormClipOps()))
      GTEST_SKIP() << be_->Name() << " has no fused batch norm";
  }

  View Upload(const std::vector<float>& host) {
    buffers_.push_back(be_->Allocate(host.size()));
    const View v = WholeOf(*buffers_.back());
    be_->Upload(host.data(), v);
    return v;
  }
  std::vector<float> Download(View v) {
    std::vector<float> host(v.count);
    be_->Download(v, host.data());
    return host;
  }

  // x in [x_lo, x_hi), scale and shift up to 5 (which clip a good share of
  // the outputs at 0 and 6), running statistics [mean, var] and zeroed
  // saved ones [mean, invstd], all [c].
  struct Inputs {
    View x, scale, shift, running, saved;
  };
  Inputs MakeInputs(size_t n, size_t c, float x_lo, float x_hi) {
    std::vector<float> stats = RandomVector(c, 44, -0.5f, 0.5f);
    const std::vector<float> var = RandomVector(c, 45, 0.5f, 2.0f);
    stats.insert(stats.end(), var.begin(), var.end());
    return Inputs{Upload(RandomVector(n, 41, x_lo, x_hi)), Upload(RandomVector(c, 42, -5.0f, 5.0f)),
                  Upload(RandomVector(c, 43, -3.0f, 5.0f)), Upload(stats),
                  Upload(std::vector<float>(2 * c, 0.0f))};
  }

  // One forward and backward pass, fused or not; `training` picks batch or
  // running statistics, and frozen skips the parameter gradients.
  Outputs Run(const Case& k, bool fused, bool training, bool frozen) {
    BatchNormGeometry g;
    g.batch = k.batch;
    g.channels = k.channels;
    g.inner = k.inner;
    const size_t n = size_t(k.batch) * k.channels * k.inner, c = k.channels;
    const Inputs in = MakeInputs(n, c, -1.0f, 3.0f);
    const View x = in.x, scale = in.scale, shift = in.shift, running = in.running, saved = in.saved;
    const View rm = running.Slice(0, c), rv = running.Slice(c, c);
    const View smean = saved.Slice(0, c), sinvstd = saved.Slice(c, c);
    const View y = Upload(std::vector<float>(n, 0.0f));
    const View grad = Upload(RandomVector(n, 46));  // d_y, then d_x over it
    const View d_params = Upload(std::vector<float>(2 * c, -1.0f));
    const View d_scale = frozen ? View{} : d_params.Slice(0, c);
    const View d_shift = frozen ? View{} : d_params.Slice(c, c);
    const View mean = training ? smean : rm;
    if (fused) {
      if (training)
        kBatchNormClipForwardTraining(*be_, g, x, scale, shift, rm, rv, smean, sinvstd, y, 0.0f,
                                      k.hi);
      else
        kBatchNormClipForwardInference(*be_, g, x, scale, shift, rm, rv, sinvstd, y, 0.0f, k.hi);
      kBatchNormClipBackward(*be_, g, x, grad, scale, shift, mean, sinvstd, training, grad, d_scale,
                             d_shift, 0.0f, k.hi);
    } else {
      if (training)
        be_->BatchNormForwardTraining(g, x, scale, shift, rm, rv, smean, sinvstd, y);
      else
        be_->BatchNormForwardInference(g, x, scale, shift, rm, rv, sinvstd, y);
      be_->ClipForward(y, y, 0.0f, k.hi);
      be_->ClipBackward(y, grad, grad, 0.0f, k.hi);
      be_->BatchNormBackward(g, x, grad, scale, mean, sinvstd, training, grad, d_scale, d_shift);
    }
    return Outputs{Download(y),
                   Download(grad),
                   Download(d_params.Slice(0, c)),
                   Download(d_params.Slice(c, c)),
                   Download(saved),
                   Download(running)};
  }

  std::unique_ptr<Backend> be_;
  std::vector<std::unique_ptr<Buffer>> buffers_;
};

void ExpectIdentical(const Outputs& fused, const Outputs& plain, const std::string& what) {
  EXPECT_EQ(fused.y, plain.y) << what << ": output";
  EXPECT_EQ(fused.d_x, plain.d_x) << what << ": input gradient";
  EXPECT_EQ(fused.d_scale, plain.d_scale) << what << ": scale gradient";
  EXPECT_EQ(fused.d_shift, plain.d_shift) << what << ": shift gradient";
  EXPECT_EQ(fused.saved, plain.saved) << what << ": saved statistics";
  EXPECT_EQ(fused.running, plain.running) << what << ": running statistics";
}

TEST_P(BatchNormClip, FusedEqualsBatchNormThenClipBitForBit) {
  for (const Case& k : kCases) {
    for (bool training : {true, false}) {
      for (bool frozen : {false, true}) {
        const std::string what = std::to_string(k.batch) + "x" + std::to_string(k.channels) + "x" +
                                 std::to_string(k.inner) + " hi " + std::to_string(k.hi) +
                                 (training ? " training" : " running stats") +
                                 (frozen ? " frozen" : "");
        const Outputs fused = Run(k, true, training, frozen);
        const Outputs plain = Run(k, false, training, frozen);
        ExpectIdentical(fused, plain, what);
        // The check means something only if the clip cut on both sides.
        const auto at_zero = std::count(fused.y.begin(), fused.y.end(), 0.0f);
        const auto at_hi = std::count(fused.y.begin(), fused.y.end(), k.hi);
        EXPECT_GT(at_zero, 0) << what;
        if (k.hi == 6.0f) {
          EXPECT_GT(at_hi, 0) << what;
        }
        EXPECT_LT(at_zero + at_hi, static_cast<long>(fused.y.size())) << what;
      }
    }
  }
}

// Planes of 32x32, 16x16, 8x8, 7x7 (partial vectors), 4x4, 2x2 and 1x1,
// flat features (inner 1, many samples), and channels past a tile.
struct ReplayCase {
  int batch, channels, inner;
};
const ReplayCase kReplayCases[] = {{4, 3, 1024}, {5, 20, 256}, {3, 17, 64}, {4, 9, 49}, {6, 40, 16},
                                   {8, 33, 4},   {8, 24, 1},   {64, 10, 1}, {2, 40, 9}};

enum class Clip { kNone, kRelu6, kRelu };

// The one-pass replay of a training pass (kernels/batch_norm_replay.h).
class BatchNormReplay : public BatchNormClip {
 protected:
  void SetUp() override {
    BatchNormClip::SetUp();
    if (IsSkipped()) return;
    if (!be_->SupportedOps().Has(kBatchNormReplay.op()))
      GTEST_SKIP() << be_->Name() << " has no one-pass batch norm replay";
  }

  // The training pass, then its replay into a buffer of other values.
  void Check(const ReplayCase& k, Clip clip) {
    const std::string what = std::to_string(k.batch) + "x" + std::to_string(k.channels) + "x" +
                             std::to_string(k.inner) +
                             (clip == Clip::kNone    ? " no clip"
                              : clip == Clip::kRelu6 ? " relu6"
                                                     : " relu");
    BatchNormGeometry g;
    g.batch = k.batch;
    g.channels = k.channels;
    g.inner = k.inner;
    const size_t n = size_t(k.batch) * k.channels * k.inner, c = k.channels;
    const float hi = clip == Clip::kRelu6 ? 6.0f : std::numeric_limits<float>::infinity();
    // A large mean against the spread.
    const Inputs in = MakeInputs(n, c, 40.0f, 44.0f);
    const View x = in.x, scale = in.scale, shift = in.shift, running = in.running, saved = in.saved;
    const View rm = running.Slice(0, c), rv = running.Slice(c, c);
    const View smean = saved.Slice(0, c), sinvstd = saved.Slice(c, c);
    const View y = Upload(std::vector<float>(n, 0.0f));
    const View replayed = Upload(RandomVector(n, 76));
    if (clip == Clip::kNone)
      be_->BatchNormForwardTraining(g, x, scale, shift, rm, rv, smean, sinvstd, y);
    else
      kBatchNormClipForwardTraining(*be_, g, x, scale, shift, rm, rv, smean, sinvstd, y, 0.0f, hi);
    const std::vector<float> saved_before = Download(saved), running_before = Download(running);
    kBatchNormReplay(*be_, g, x, scale, shift, smean, sinvstd, replayed, clip != Clip::kNone, 0.0f,
                     hi);
    const std::vector<float> expected = Download(y), got = Download(replayed);
    EXPECT_EQ(got, expected) << what;
    EXPECT_EQ(Download(saved), saved_before) << what;
    EXPECT_EQ(Download(running), running_before) << what;
    // Meaningful only if the clip cut, and the values are not all one.
    const auto at_zero = std::count(expected.begin(), expected.end(), 0.0f);
    if (clip != Clip::kNone) {
      EXPECT_GT(at_zero, 0) << what;
    }
    EXPECT_LT(at_zero, static_cast<long>(expected.size())) << what;
  }
};

TEST_P(BatchNormReplay, EqualsTheTrainingPassBitForBit) {
  for (const ReplayCase& k : kReplayCases)
    for (Clip clip : {Clip::kNone, Clip::kRelu6, Clip::kRelu}) Check(k, clip);
}

TEST_P(BatchNormReplay, MayWriteOverItsInput) {
  const size_t n = 4 * 6 * 49, c = 6;
  BatchNormGeometry g;
  g.batch = 4;
  g.channels = 6;
  g.inner = 49;
  const View x = Upload(RandomVector(n, 81, -1.0f, 3.0f));
  const View params = Upload(RandomVector(2 * c, 82, -2.0f, 2.0f));
  const View running = Upload(std::vector<float>(2 * c, 1.0f));
  const View saved = Upload(std::vector<float>(2 * c, 0.0f));
  const View y = Upload(std::vector<float>(n, 0.0f));
  const View scale = params.Slice(0, c), shift = params.Slice(c, c);
  kBatchNormClipForwardTraining(*be_, g, x, scale, shift, running.Slice(0, c), running.Slice(c, c),
                                saved.Slice(0, c), saved.Slice(c, c), y, 0.0f, 6.0f);
  kBatchNormReplay(*be_, g, x, scale, shift, saved.Slice(0, c), saved.Slice(c, c), x, true, 0.0f,
                   6.0f);
  EXPECT_EQ(Download(x), Download(y));
}

INSTANTIATE_TEST_SUITE_P(Backends, BatchNormClip, ::testing::Values("cpu1", "cpu3", "opencl"),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Backends, BatchNormReplay, ::testing::Values("cpu1", "cpu3", "opencl"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace mt::kernels
