// mtmodel profile as a user runs it: per batch size a fresh process whose
// measured peak RSS the prediction (the estimate the batch caps use) must
// match within 10%; step times that make sense; usage errors exit 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/files.h"
#include "tests/support/subprocess.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::RunProcess;

std::string Tool() { return test_support::BinaryPath("modeltool/mtmodel"); }

TEST(MtModelProfile, PredictsMeasuredMemoryWithinTenPercent) {
  const fs::path dir = test_support::FreshTempDir("mtmodel-profile");
  const auto r = RunProcess({Tool(), "profile", "lenet5", "--batches", "16,64", "--steps", "2",
                             "--json", (dir / "p.json").string()},
                            120);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, ::testing::HasSubstr("measured MiB"));
  const json j = test_support::ReadJson(dir / "p.json");
  ASSERT_EQ(j["batches"].size(), 2u) << j.dump(2);
  int64_t last_model = 0;
  for (const json& b : j["batches"]) {
    const double predicted = b["predicted_bytes"].get<double>();
    const double measured = b["peak_rss"].get<double>();
    EXPECT_NEAR(predicted / measured, 1.0, 0.10) << b.dump(2);
    EXPECT_GT(b["ms_per_step"].get<double>(), 0);
    EXPECT_GT(b["samples_per_second"].get<double>(), 0);
    // The model's share grows with the batch.
    EXPECT_GT(b["model_bytes"].get<int64_t>(), last_model);
    last_model = b["model_bytes"].get<int64_t>();
  }
  EXPECT_EQ(j["batches"][0]["batch"], 16);
  EXPECT_EQ(j["batches"][1]["batch"], 64);
  fs::remove_all(dir);
}

TEST(MtModelProfile, UsageErrorsAndBadModels) {
  auto r = RunProcess({Tool(), "profile", "lenet5", "--batches", "0"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, ::testing::HasSubstr("--batches"));
  r = RunProcess({Tool(), "profile", "lenet5", "--device", "tpu"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = RunProcess({Tool(), "profile", "lenet7"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, ::testing::HasSubstr("lenet7"));
  r = RunProcess({Tool(), "--help"});
  EXPECT_THAT(r.output, ::testing::HasSubstr("profile"));
  EXPECT_THAT(r.output, ::testing::Not(::testing::HasSubstr("measure-batch")));
}

}  // namespace
}  // namespace mt
