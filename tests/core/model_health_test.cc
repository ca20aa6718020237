// The end-of-run check on the model (core/train/model_health.h) that
// mtworker --standalone makes, with the hub's cases
// (tests/hub/model_health_test.cc): a model at chance, broken or one that
// lost what it learned is no result, while a short honest run that is
// still learning, or one that wobbles, passes.
#include "core/train/model_health.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/model/model_spec.h"
#include "kernels/cpu/cpu_backend.h"

namespace mt::health {
namespace {

using ::testing::HasSubstr;

EvalPoint At(int64_t step, double accuracy, double loss) {
  EvalPoint p;
  p.step = step;
  p.test_accuracy = accuracy;
  p.test_loss = loss;
  return p;
}

TEST(ModelHealth, AModelAtChanceFails) {
  // Issue 44's trap: Adam at SGD's 0.05, standalone LeNet-5 at 0.100.
  EXPECT_THAT(CollapsedModelReason({At(938, 0.100, 2.3026)}, 10),
              HasSubstr("the model is at chance"));
  // The same after it had learned.
  EXPECT_THAT(CollapsedModelReason({At(100, 0.71, 0.8), At(313, 0.1, 2.31)}, 10),
              HasSubstr("fell to 0.100 (chance 0.100) from 0.710 at step 100"));
  // At chance with a lower loss, but it did better before.
  EXPECT_THAT(CollapsedModelReason({At(50, 0.4, 1.7), At(100, 0.12, 1.9)}, 10),
              HasSubstr("the model is at chance"));
  EXPECT_THAT(CollapsedModelReason({At(100, 0.84, 0.5), At(313, 0.377, 1.6)}, 10),
              HasSubstr("the model collapsed"));
}

TEST(ModelHealth, HonestRunsPass) {
  EXPECT_EQ(CollapsedModelReason({}, 10), "") << "nothing evaluated";
  EXPECT_EQ(CollapsedModelReason({At(313, 0.86, 0.4)}, 10), "");
  // A short run, still near chance but learning: its loss is below a
  // uniform guess's.
  EXPECT_EQ(CollapsedModelReason({At(5, 0.13, 2.0)}, 10), "");
  EXPECT_EQ(CollapsedModelReason({At(100, 0.80, 0.6), At(200, 0.62, 1.0), At(300, 0.75, 0.7)}, 10),
            "");
  EXPECT_EQ(CollapsedModelReason({At(10, 0.9, 0.3)}, 2), "");
  EXPECT_THAT(CollapsedModelReason({At(10, 0.5, 0.6932)}, 2), HasSubstr("at chance"));
}

TEST(ModelHealth, BrokenWeightsOrLossFail) {
  kernels::CpuBackend backend;
  auto model = BuildModel(LoadModelSpec("lenet5"), backend);
  EXPECT_EQ(ResultProblem(*model, {At(938, 0.86, 0.4)}, 10), "");
  EXPECT_THAT(ResultProblem(*model, {At(938, 0.10, 500.0)}, 10), HasSubstr("broken"));
  std::vector<float> w(model->ParamCount(), 0.01f);
  w[3] = std::nanf("");
  model->SetParams(w.data());
  EXPECT_THAT(ResultProblem(*model, {At(938, 0.86, 0.4)}, 10),
              HasSubstr("1 of its " + std::to_string(w.size()) + " weights are not finite"));
  EXPECT_THAT(BrokenModelReason(*model, -1, 10), HasSubstr("not finite"));
}

}  // namespace
}  // namespace mt::health
