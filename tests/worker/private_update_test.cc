// A worker under differential privacy (JoinReply.privacy): what leaves it
// is its gradient (or round's change) clipped to the hub's norm, in the
// gradient's direction, and with the workers adding the noise, that plus
// noise of the asked scale. Against a trainer taking the same step by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <vector>

#include "core/data/sampler.h"
#include "core/privacy/dp_clip.h"
#include "core/train/run_plan.h"
#include "tests/support/files.h"
#include "tests/support/scripted_hub.h"

namespace mt {
namespace {

using test_support::ScriptedWorker;

class PrivateUpdateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_support::FreshTempDir("private-update");
    worker_ = std::make_unique<ScriptedWorker>(dir_.string());
  }
  void TearDown() override {
    worker_.reset();
    std::filesystem::remove_all(dir_);
  }

  // The gradient of step 0 (8 samples at 0) as a worker without privacy
  // computes it, at ScriptedWorker::State's weights.
  std::vector<float> PlainGradient() {
    LocalTrainer t(devices_, worker_->spec());
    const std::vector<float> start(worker_->params(), 0.01f);
    t.model().SetParams(start.data());
    const std::vector<uint32_t> order = EpochOrder(t.data().Size(), worker_->join().seed(), 0);
    const std::vector<uint32_t> indices(order.begin(), order.begin() + 8);
    t.ComputeGradients(indices.data(), 8, DropoutSeed(worker_->join().seed(), 0, 0));
    const float* g = kernels::CpuBackend::Data(t.model().grads());
    return std::vector<float>(g, g + worker_->params());
  }

  std::vector<float> Sent(int local_steps) {
    worker_->Run({worker_->State(), ScriptedWorker::Plan(0, 0, 8, local_steps, 8)});
    EXPECT_EQ(worker_->sent().size(), 1u);
    const proto::GradientChunk& c = worker_->sent().at(0).gradient();
    return std::vector<float>(c.values().begin(), c.values().end());
  }

  std::filesystem::path dir_;
  std::unique_ptr<ScriptedWorker> worker_;
  ComputeDevices devices_{DeviceChoice::kCpu, 1};
};

TEST_F(PrivateUpdateTest, TheGradientLeavesClippedInItsDirection) {
  const std::vector<float> plain = PlainGradient();
  const double norm = dp::L2Norm(plain.data(), plain.size());
  const double clip = norm / 4;  // well inside: the clip must bite
  worker_->mutable_join().mutable_privacy()->set_clip(clip);
  const std::vector<float> sent = Sent(0);
  ASSERT_EQ(sent.size(), plain.size());
  EXPECT_LE(dp::L2Norm(sent.data(), sent.size()), clip);
  EXPECT_NEAR(dp::L2Norm(sent.data(), sent.size()), clip, clip * 1e-5);
  for (size_t i = 0; i < plain.size(); ++i)
    ASSERT_NEAR(sent[i], plain[i] / 4, 1e-5 * std::fabs(plain[i]) + 1e-12) << i;
}

TEST_F(PrivateUpdateTest, ARoundsChangeIsClippedToo) {
  const std::vector<float> unclipped = Sent(3);
  const double norm = dp::L2Norm(unclipped.data(), unclipped.size());
  ASSERT_GT(norm, 0);
  worker_->mutable_join().mutable_privacy()->set_clip(norm / 2);
  const std::vector<float> sent = Sent(3);
  EXPECT_NEAR(dp::L2Norm(sent.data(), sent.size()), norm / 2, norm * 1e-5);
  for (size_t i = 0; i < sent.size(); i += 101)
    ASSERT_NEAR(sent[i], unclipped[i] / 2, 1e-5 * std::fabs(unclipped[i]) + 1e-12) << i;
}

TEST_F(PrivateUpdateTest, WorkersAddingTheNoiseSendTheirShareOfIt) {
  const std::vector<float> plain = PlainGradient();
  const double clip = dp::L2Norm(plain.data(), plain.size()) * 2;  // no clipping
  worker_->mutable_join().mutable_privacy()->set_clip(clip);
  worker_->mutable_join().mutable_privacy()->set_noise_stddev(0.02);
  const std::vector<float> sent = Sent(0);
  double sum = 0, squares = 0;
  for (size_t i = 0; i < sent.size(); ++i) {
    const double d = sent[i] - plain[i];
    sum += d;
    squares += d * d;
  }
  const auto n = static_cast<double>(sent.size());  // 61706: standard error of the sd ~0.3%
  EXPECT_NEAR(sum / n, 0, 0.001);
  EXPECT_NEAR(std::sqrt(squares / n), 0.02, 0.0005);
  // Drawn afresh each time: the same step sends other noise.
  EXPECT_NE(Sent(0), sent);
}

}  // namespace
}  // namespace mt
