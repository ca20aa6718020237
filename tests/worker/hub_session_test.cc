// A worker's session with the hub over an in-memory link (no gRPC): what it
// sends for a step and for a local-SGD round, and what it does with the
// hub's answers, checked bit for bit against a second trainer that takes
// the same steps by hand.
#include "worker/hub_session.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <thread>
#include <vector>

#include "core/data/sampler.h"
#include "core/train/run_plan.h"
#include "core/util/digest.h"
#include "tests/support/files.h"
#include "tests/support/scripted_hub.h"

namespace mt {
namespace {

using test_support::ScriptedWorker;

class HubSessionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = test_support::FreshTempDir("hub-session");
    worker_ = new ScriptedWorker(dir_.string());
    devices_ = new ComputeDevices(DeviceChoice::kCpu, 1);
  }
  static void TearDownTestSuite() {
    delete worker_;
    delete devices_;
    std::filesystem::remove_all(dir_);
  }

  // A trainer built as the worker's, at the weights of ScriptedWorker::State.
  static std::unique_ptr<LocalTrainer> Reference() {
    auto t = std::make_unique<LocalTrainer>(*devices_, worker_->spec());
    const std::vector<float> start(worker_->params(), 0.01f);
    t->model().SetParams(start.data());
    return t;
  }

  // Step `step` of the per-step mode on `t`: `batch` samples at `offset`
  // of epoch 0's order, the run's dropout. Returns the loss sum.
  static double ReferenceStep(LocalTrainer& t, int64_t step, int64_t offset, int batch) {
    const std::vector<uint32_t> order = EpochOrder(t.data().Size(), worker_->join().seed(), 0);
    const std::vector<uint32_t> indices(order.begin() + offset, order.begin() + offset + batch);
    return t.ComputeGradients(indices.data(), batch,
                              DropoutSeed(worker_->join().seed(), step, offset));
  }

  static std::vector<float> Weights(const LocalTrainer& t) {
    std::vector<float> w(t.model().ParamCount());
    t.model().GetParams(w.data());
    return w;
  }
  static std::vector<float> Gradients(LocalTrainer& t) {
    const float* g = kernels::CpuBackend::Data(t.model().grads());
    return std::vector<float>(g, g + t.model().ParamCount());
  }
  static std::vector<float> Values(const proto::GradientChunk& c) {
    return std::vector<float>(c.values().begin(), c.values().end());
  }

  // The hub's answer: `values` as the result of the step (or round) before
  // `step`, with no plan after it.
  static proto::HubMessage Result(int64_t step, const std::vector<float>& values,
                                  int local_steps = 0) {
    proto::HubMessage m;
    auto* r = m.mutable_result();
    r->set_step(step);
    r->set_offset(0);
    r->mutable_values()->Add(values.begin(), values.end());
    r->set_last(true);
    r->set_mean_loss(1.5);
    r->set_local_steps(local_steps);
    return m;
  }

  // A made-up average: small, different for every parameter.
  static std::vector<float> SomeAverage() {
    std::vector<float> v(worker_->params());
    for (size_t i = 0; i < v.size(); ++i) v[i] = 1e-3f * static_cast<float>(i % 7) - 2e-3f;
    return v;
  }

  static std::filesystem::path dir_;
  static ScriptedWorker* worker_;
  static ComputeDevices* devices_;
};
std::filesystem::path HubSessionTest::dir_;
ScriptedWorker* HubSessionTest::worker_ = nullptr;
ComputeDevices* HubSessionTest::devices_ = nullptr;

TEST_F(HubSessionTest, AStepSendsTheGradientOfItsAssignedSamples) {
  const auto out = worker_->Run({worker_->State(), ScriptedWorker::Plan(3, 8, 8)});
  EXPECT_EQ(out, HubSession::Outcome::kBroken);  // the script ended: the hub went away
  ASSERT_EQ(worker_->sent().size(), 1u);
  const proto::GradientChunk& chunk = worker_->sent()[0].gradient();
  EXPECT_EQ(chunk.step(), 3);
  EXPECT_EQ(chunk.offset(), 0u);
  EXPECT_TRUE(chunk.last());
  EXPECT_EQ(chunk.batch(), 8);

  auto ref = Reference();
  EXPECT_EQ(chunk.weights_digest(), DigestFloats(Weights(*ref).data(), worker_->params()));
  const double loss = ReferenceStep(*ref, 3, 8, 8);
  EXPECT_EQ(chunk.loss_sum(), loss);
  EXPECT_EQ(Values(chunk), Gradients(*ref));
}

TEST_F(HubSessionTest, TheHubsAverageIsAppliedWithTheOptimizerAsTheHubAppliesIt) {
  const std::vector<float> average = SomeAverage();
  worker_->Run({worker_->State(), ScriptedWorker::Plan(0, 0, 8), Result(0, average)});
  auto ref = Reference();
  ref->ApplyGradients(average.data());
  EXPECT_EQ(Weights(worker_->trainer()), Weights(*ref));
  EXPECT_EQ(worker_->totals().last_mean_loss, 1.5);
}

TEST_F(HubSessionTest, ARoundSendsTheChangeOverItsLocalStepsAndAddsTheAveragedChange) {
  constexpr int kSteps = 3, kBatch = 8, kStride = 8;
  const int64_t steps_before = worker_->totals().steps;
  worker_->Run({worker_->State(), ScriptedWorker::Plan(0, 0, kBatch, kSteps, kStride)});
  ASSERT_EQ(worker_->sent().size(), 1u);
  const proto::GradientChunk& chunk = worker_->sent()[0].gradient();
  EXPECT_EQ(chunk.step(), 0);
  EXPECT_EQ(chunk.batch(), kSteps * kBatch);  // all the round's samples
  EXPECT_EQ(worker_->totals().steps - steps_before, kSteps);

  // The round's steps by hand: each on the samples and dropout it would
  // have as a step of its own.
  auto ref = Reference();
  const std::vector<float> start = Weights(*ref);
  double loss = 0;
  for (int k = 0; k < kSteps; ++k) {
    loss += ReferenceStep(*ref, k, k * kStride, kBatch);
    ref->ApplyGradients();
  }
  const std::vector<float> end = Weights(*ref);
  std::vector<float> change(start.size());
  for (size_t i = 0; i < start.size(); ++i) change[i] = end[i] - start[i];
  EXPECT_EQ(chunk.loss_sum(), loss);
  EXPECT_EQ(Values(chunk), change);

  // The hub's averaged change lands on the round's start, not on where
  // this worker's own steps took it.
  const std::vector<float> average = SomeAverage();
  worker_->Run({worker_->State(), ScriptedWorker::Plan(0, 0, kBatch, kSteps, kStride),
                Result(0, average, kSteps)});
  std::vector<float> expected(start.size());
  for (size_t i = 0; i < start.size(); ++i) expected[i] = start[i] + average[i];
  EXPECT_EQ(Weights(worker_->trainer()), expected);
}

TEST_F(HubSessionTest, StepsTakenAheadMoveOntoTheAveragedChange) {
  // mthub --overlap: while the round's change travels, the worker takes the
  // next round's steps; the hub's average then lands under them.
  constexpr int kSteps = 3, kBatch = 8, kStride = 8;
  const auto dir = test_support::FreshTempDir("hub-session-ahead");
  ScriptedWorker w(dir.string());
  w.mutable_join().set_overlap_rounds(true);
  // The result is read only once the steps ahead (at most a round's) are done.
  w.set_before_read([](const WorkerControl& control, size_t i) {
    if (i != 2) return;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (control.Snapshot().steps_trained < 2 * kSteps &&
           std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  const std::vector<float> average = SomeAverage();
  w.Run(
      {w.State(), ScriptedWorker::Plan(0, 0, kBatch, kSteps, kStride), Result(0, average, kSteps)});
  EXPECT_EQ(w.totals().steps_ahead, kSteps);

  // By hand: the round, then the next round's first steps on their samples.
  auto ref = Reference();
  const std::vector<float> start = Weights(*ref);
  std::vector<float> sent;
  for (int k = 0; k < 2 * kSteps; ++k) {
    if (k == kSteps) sent = Weights(*ref);
    ReferenceStep(*ref, k, k * kStride, kBatch);
    ref->ApplyGradients();
  }
  const std::vector<float> now = Weights(*ref);
  std::vector<float> expected(start.size());
  for (size_t i = 0; i < start.size(); ++i)
    expected[i] = (start[i] + average[i]) + (now[i] - sent[i]);
  EXPECT_EQ(Weights(w.trainer()), expected);
  std::filesystem::remove_all(dir);
}

TEST_F(HubSessionTest, AGoodbyeEndsTheSessionWithTheHubsAccuracy) {
  proto::HubMessage stop;
  stop.mutable_stop()->set_reason("training complete");
  stop.mutable_stop()->set_test_accuracy(0.875);
  EXPECT_EQ(worker_->Run({worker_->State(), ScriptedWorker::Plan(0, 0, 8), stop,
                          ScriptedWorker::Plan(1, 8, 8)}),
            HubSession::Outcome::kGoodbye);
  EXPECT_EQ(worker_->sent().size(), 1u);  // nothing after the goodbye
  EXPECT_EQ(worker_->totals().hub_accuracy, 0.875);
}

TEST_F(HubSessionTest, AWorkerLeftOutWaitsForTheWeightsAndThenTrainsAgain) {
  proto::HubMessage left;
  left.mutable_left_out()->set_step(0);
  left.mutable_left_out()->set_reason("deadline");
  const int64_t left_before = worker_->totals().steps_left_out;
  worker_->Run({worker_->State(), ScriptedWorker::Plan(0, 0, 8), left, worker_->State(),
                ScriptedWorker::Plan(1, 8, 8)});
  EXPECT_EQ(worker_->totals().steps_left_out - left_before, 1);
  ASSERT_EQ(worker_->sent().size(), 2u);
  // The second step starts from the state, as the hub's master does.
  auto ref = Reference();
  ReferenceStep(*ref, 1, 8, 8);
  EXPECT_EQ(worker_->sent()[1].gradient().step(), 1);
  EXPECT_EQ(Values(worker_->sent()[1].gradient()), Gradients(*ref));
}

}  // namespace
}  // namespace mt
