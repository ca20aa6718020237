// --compress on real processes, every encoding: the hub and its workers stay bit-identical
// (a weight digest every step, no resync), the model learns as well as
// without compression, and the bytes on the wire shrink as promised.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "tests/support/cluster_processes.h"
#include "tests/support/files.h"
#include "tests/support/idx_writer.h"

namespace mt {
namespace {

namespace fs = std::filesystem;

struct Outcome {
  double accuracy = 0, bytes_per_step = 0, resyncs = 0;
  // The report's per-layer bytes of one message at the run's encoding,
  // summed, and fc1's values.
  double layer_bytes = 0, fc1_values = 0;
};

Outcome Train(const fs::path& data, const std::string& compression) {
  const fs::path dir = test_support::FreshTempDir("compress-" + compression);
  std::unique_ptr<test_support::ChildProcess> hub;
  const int port =
      test_support::StartHub(hub, dir,
                             {"--workers", "2", "--dataset", data.string(), "--epochs", "100",
                              "--steps", "150", "--batch-policy", "fixed", "--digest-every", "1",
                              "--compress", compression, "--sync-every", "1",  // per-step bytes
                              "--report", (dir / "hub.json").string()});
  if (port == 0) return {};
  auto a = test_support::StartWorker(dir, "a", port), b = test_support::StartWorker(dir, "b", port);
  EXPECT_EQ(a->Wait(300), 0) << a->Log();
  EXPECT_EQ(b->Wait(300), 0) << b->Log();
  EXPECT_EQ(hub->Wait(60), 0) << hub->Log();
  const nlohmann::json report = test_support::ReadJson(dir / "hub.json");
  EXPECT_EQ(report.value("steps", int64_t{0}), 150) << report.dump(2);
  Outcome o;
  o.accuracy = report.value("test_accuracy", -1.0);
  o.bytes_per_step = report.value("gradient_bytes_per_step", 0.0);
  for (const nlohmann::json& layer :
       report.value("exchange_bytes_per_layer", nlohmann::json::array())) {
    o.layer_bytes += layer["bytes"].value(compression, 0.0);
    if (layer.value("layer", "") == "fc1") o.fc1_values = layer.value("values", 0.0);
  }
  for (const char* w : {"a", "b"}) {
    // Both sides count resyncs: the worker when it gets the state, the hub when it sends it.
    o.resyncs +=
        test_support::ReadJson(dir / (std::string(w) + ".json")).value("resyncs", int64_t{0});
    o.resyncs += test_support::ReportedWorker(report, w).value("resyncs", int64_t{0});
  }
  fs::remove_all(dir);
  return o;
}

TEST(Compression, EachEncodingTrainsLikeNoneOnItsShareOfTheBytes) {
  const fs::path data = test_support::FreshTempDir("compress-data");
  test_support::WriteIdxDataset(data.string(), 3000, 500, 21);
  std::map<std::string, Outcome> runs;
  for (const char* c : {"none", "fp16", "int8", "topk", "lowrank"}) runs[c] = Train(data, c);
  for (const auto& [name, o] : runs) {
    EXPECT_EQ(o.resyncs, 0) << name << ": a worker's weights drifted from the hub's";
    EXPECT_GE(o.accuracy, 0.9) << name;
    EXPECT_GE(o.accuracy, runs["none"].accuracy - 0.03) << name;
  }
  // Two workers up and the average down to each: 4 gradients per step.
  const double none = runs["none"].bytes_per_step;
  EXPECT_NEAR(none, 4.0 * 61706 * 4, 4.0 * 61706 * 4 * 0.01);
  EXPECT_NEAR(runs["fp16"].bytes_per_step / none, 0.5, 0.01);
  EXPECT_NEAR(runs["int8"].bytes_per_step / none, (1 + 4.0 / 256) / 4, 0.01);
  EXPECT_NEAR(runs["topk"].bytes_per_step / none, 68.0 / 1024, 0.005);
  // lowrank: the weight matrices as factors (conv1 rank 1, conv2 3, fc1 and
  // fc2 4, fc3 2: 66 + 1,008 + 4,176 + 1,648 + 384 bytes), biases int8 (256).
  EXPECT_NEAR(runs["lowrank"].bytes_per_step / none, 7538.0 / (61706 * 4), 0.002);
  // The report's per-layer figures add up to what one message measured,
  // for every encoding (int8 and topk blocks straddle layers: within 1%).
  for (const auto& [name, o] : runs) {
    EXPECT_NEAR(o.layer_bytes, o.bytes_per_step / 4, o.bytes_per_step / 4 * 0.01) << name;
    EXPECT_EQ(o.fc1_values, 400 * 120 + 120) << name;
  }
  fs::remove_all(data);
}

}  // namespace
}  // namespace mt
