// mtmodel profile as a user runs it: per batch size a fresh process whose
// measured peak RSS the prediction (the estimate the batch caps use) must
// match within 10%; step times that make sense; usage errors exit 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

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

// --recompute: predicted still matches measured, and a sample costs much
// less (mobilenet-tiny: 1,592 KiB instead of 2,785).
TEST(MtModelProfile, RecomputingPredictsItsSmallerMemory) {
  const fs::path dir = test_support::FreshTempDir("mtmodel-profile-recompute");
  std::vector<json> runs;
  for (bool recompute : {false, true}) {
    std::vector<std::string> args{Tool(),      "profile", "mobilenet-tiny",
                                  "--batches", "32",      "--steps",
                                  "1",         "--json",  (dir / "p.json").string()};
    if (recompute) args.push_back("--recompute");
    const auto r = RunProcess(args, 300);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_THAT(r.output, ::testing::HasSubstr("KiB/sample"));
    runs.push_back(test_support::ReadJson(dir / "p.json"));
  }
  const json &kept = runs[0]["batches"][0], &replayed = runs[1]["batches"][0];
  EXPECT_EQ(runs[1]["recompute"], true);
  EXPECT_GT(replayed["replayed_layers"].get<int>(), 0);
  EXPECT_NEAR(replayed["predicted_bytes"].get<double>() / replayed["peak_rss"].get<double>(), 1.0,
              0.10)
      << replayed.dump(2);
  EXPECT_LT(replayed["bytes_per_sample"].get<double>(),
            0.6 * kept["bytes_per_sample"].get<double>());
  fs::remove_all(dir);
}

// --activation-precision bf16: the prediction still matches the measured
// peak; the tables below the timings say what each layer keeps and what a
// sample costs in every setting.
TEST(MtModelProfile, ShowsWhatThePlanKeepsAndEverySetting) {
  const fs::path dir = test_support::FreshTempDir("mtmodel-profile-bf16");
  const auto r = RunProcess({Tool(), "profile", "mobilenet-tiny", "--batches", "32", "--steps", "1",
                             "--activation-precision", "bf16", "--json", (dir / "p.json").string()},
                            300);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, ::testing::HasSubstr("what the plan keeps"));
  EXPECT_THAT(r.output, ::testing::HasSubstr("KiB per sample by setting"));
  const json j = test_support::ReadJson(dir / "p.json");
  const json& run = j["batches"][0];
  EXPECT_EQ(run["activation_precision"], "bf16");
  EXPECT_GT(run["packed_values"].get<int>(), 0);
  EXPECT_NEAR(run["predicted_bytes"].get<double>() / run["peak_rss"].get<double>(), 1.0, 0.10)
      << run.dump(2);
  int packed = 0, fused = 0;
  for (const json& row : j["kept_per_layer"]) {
    packed += row["kept"] == "bf16";
    fused += row["kept"].get<std::string>().rfind("fused into", 0) == 0;
  }
  EXPECT_GT(packed, 5);
  EXPECT_GT(fused, 5);  // mobilenet-tiny's ReLU6s
  const json& by = j["kib_per_sample_by_setting"];
  EXPECT_LT(by["bf16"]["kept"].get<double>(), by["fp32"]["kept"].get<double>());
  EXPECT_LT(by["fp32"]["recompute"].get<double>(), by["fp32"]["kept"].get<double>());
  EXPECT_NEAR(by["bf16"]["kept"].get<double>() * 1024, run["bytes_per_sample"].get<double>(), 1);
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
