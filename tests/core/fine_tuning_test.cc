// --freeze and --train-only name layers with weights; anything else is a
// mistake said at once, with the layers that could have been meant.
#include "core/model/fine_tuning.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/model/model_spec.h"
#include "core/model/presets.h"

namespace mt {
namespace {

using ::testing::HasSubstr;

proto::ModelSpec LeNet() { return ParseModelSpec(PresetSpecText("lenet5"), "lenet5"); }

std::string Refusal(const FineTuning& tuning) {
  try {
    FrozenLayers(LeNet(), tuning);
  } catch (const ModelSpecError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return "";
}

TEST(FineTuning, FreezesTheNamedLayersOrAllButTheTrainedOnes) {
  FineTuning freeze;
  freeze.freeze = {"conv1", "conv2"};
  EXPECT_EQ(FrozenLayers(LeNet(), freeze), (std::vector<std::string>{"conv1", "conv2"}));
  FineTuning head;
  head.train_only = {"fc3"};
  EXPECT_EQ(FrozenLayers(LeNet(), head),
            (std::vector<std::string>{"conv1", "conv2", "fc1", "fc2"}));
}

TEST(FineTuning, ALayerWithoutWeightsIsRefusedWithTheOnesThatHaveThem) {
  FineTuning relu;
  relu.freeze = {"relu1"};
  const std::string why = Refusal(relu);
  EXPECT_THAT(why, HasSubstr("--freeze"));
  EXPECT_THAT(why, HasSubstr("layer 'relu1' has no weights"));
  EXPECT_THAT(why, HasSubstr("layers with weights: conv1, conv2, fc1, fc2, fc3"));
  FineTuning pool;
  pool.train_only = {"pool2"};
  EXPECT_THAT(Refusal(pool),
              HasSubstr("--train-only: model lenet5's layer 'pool2' has no weights"));
}

TEST(FineTuning, AnUnknownNameOrNothingLeftToTrainIsRefused) {
  FineTuning unknown;
  unknown.freeze = {"res.c1"};
  EXPECT_THAT(Refusal(unknown), HasSubstr("has no layer named 'res.c1'"));
  FineTuning all;
  all.freeze = {"conv1", "conv2", "fc1", "fc2", "fc3"};
  EXPECT_THAT(Refusal(all), HasSubstr("nothing would train"));
}

}  // namespace
}  // namespace mt
