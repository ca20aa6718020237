// mtworker --profile as a user runs it, alone and with a hub: the report
// gets a `layers` entry per model layer with sane figures, the memory
// breakdown against the measured peak RSS, CPU utilisation and energy per
// step (null here: these machines have no battery).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/cluster_processes.h"
#include "tests/support/files.h"
#include "tests/support/idx_writer.h"
#include "tests/support/subprocess.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::ChildProcess;
using test_support::ReadJson;
using test_support::RunProcess;

const std::vector<std::string> kLeNetLayers = {"conv1", "relu1", "pool1", "flatten", "fc1",
                                               "relu3", "fc2",   "relu4", "fc3"};

// What every profiled report must hold, whichever mode wrote it.
void ExpectProfile(const json& r, int64_t steps) {
  ASSERT_TRUE(r.contains("layers") && r["layers"].is_array()) << r.dump(2);
  const json& layers = r["layers"];
  ASSERT_EQ(layers.size(), 12u) << layers.dump(2);  // LeNet-5
  std::vector<std::string> names;
  double layer_ms = 0;
  for (const json& l : layers) {
    names.push_back(l.at("name"));
    for (const char* key : {"forward_ms", "backward_ms", "gflops", "gflops_per_s", "peak_share"})
      EXPECT_GE(l.at(key).get<double>(), 0) << key << " of " << l.dump();
    EXPECT_LT(l.at("peak_share").get<double>(), 2.0) << l.dump();
    layer_ms += l["forward_ms"].get<double>() + l["backward_ms"].get<double>();
  }
  for (const std::string& name : kLeNetLayers) EXPECT_THAT(names, ::testing::Contains(name));
  EXPECT_EQ(names.front(), "conv1");
  EXPECT_EQ(names.back(), "fc3");
  const json& conv2 = layers[3];
  EXPECT_EQ(conv2["type"], "conv");
  EXPECT_GT(conv2["forward_ms"].get<double>(), 0);
  EXPECT_GT(conv2["backward_ms"].get<double>(), 0);
  EXPECT_GT(conv2["gflops_per_s"].get<double>(), 0.01);
  EXPECT_EQ(conv2["params"], 2416);
  EXPECT_GT(conv2["activation_bytes"].get<int64_t>(), 0);

  const json& p = r.at("profile");
  EXPECT_EQ(p["steps"].get<int64_t>(), steps - p["warmup_steps"].get<int64_t>());
  EXPECT_GT(p["pass_ms"].get<double>(), 0);
  EXPECT_LE(layer_ms, p["pass_ms"].get<double>() * 1.001);
  EXPECT_GT(p["peaks"][0]["gflops_per_s"].get<double>(), 0);

  const json& m = r.at("memory");
  for (const char* key : {"weights", "gradients", "optimizer", "activations", "workspaces",
                          "model_total", "predicted_total", "peak_rss", "current_rss"})
    EXPECT_GT(m.at(key).get<int64_t>(), 0) << key << " in " << m.dump(2);
  EXPECT_EQ(m["weights"].get<int64_t>(), r["parameters"].get<int64_t>() * 4);
  EXPECT_GE(m["peak_rss"].get<int64_t>(), m["model_total"].get<int64_t>());
  EXPECT_GT(r.at("cpu_utilisation").get<double>(), 0);
  EXPECT_TRUE(r.at("energy_joules_per_step").is_null() ||
              r["energy_joules_per_step"].get<double>() > 0);
}

TEST(ProfileE2e, StandaloneReportHasLayers) {
  const fs::path dir = test_support::FreshTempDir("profile-standalone");
  test_support::WriteIdxDataset(dir.string(), 256, 64, 3);
  const auto r =
      RunProcess({test_support::BinaryPath("worker/mtworker"), "--standalone", "--profile",
                  "--dataset", dir.string(), "--steps", "8", "--batch", "16", "--report",
                  (dir / "r.json").string(), "--export", (dir / "final.mtc").string()},
                 120);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ExpectProfile(ReadJson(dir / "r.json"), 8);
  EXPECT_THAT(r.output, ::testing::HasSubstr("GFLOP/s"));  // the table at the end
  // Without --profile none of it.
  const auto plain =
      RunProcess({test_support::BinaryPath("worker/mtworker"), "--standalone", "--dataset",
                  dir.string(), "--steps", "2", "--batch", "16", "--report",
                  (dir / "plain.json").string(), "--export", (dir / "final.mtc").string()},
                 120);
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_FALSE(ReadJson(dir / "plain.json").contains("layers"));
  fs::remove_all(dir);
}

TEST(ProfileE2e, HubModeWorkerReportHasLayers) {
  const fs::path dir = test_support::FreshTempDir("profile-hub");
  const fs::path data = dir / "data";
  fs::create_directories(data);
  test_support::WriteIdxDataset(data.string(), 256, 64, 3);
  std::unique_ptr<ChildProcess> hub;
  const int port =
      test_support::StartHub(hub, dir,
                             {"--workers", "1", "--model", "lenet5", "--dataset", data.string(),
                              "--steps", "6", "--sync-every", "1", "--global-batch", "16",
                              "--insecure", "--report", (dir / "hub.json").string()});
  ASSERT_GT(port, 0);
  auto worker = test_support::StartWorker(dir, "w0", port, {"--insecure", "--profile"});
  ASSERT_EQ(worker->Wait(120), 0) << worker->Log();
  EXPECT_EQ(hub->Wait(60), 0) << hub->Log();
  ExpectProfile(ReadJson(dir / "w0.json"), 6);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mt
