// --compress on real processes: the hub and its workers stay bit-identical
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
};

Outcome Train(const fs::path& data, const std::string& compression) {
  const fs::path dir = testing::FreshTempDir("compress-" + compression);
  std::unique_ptr<testing::ChildProcess> hub;
  const int port = testing::StartHub(hub, dir,
                                     {"--workers", "2", "--dataset", data.string(), "--epochs", "100", "--steps", "150",
                                      "--batch-policy", "fixed", "--digest-every", "1", "--compress", compression,
                                      "--report", (dir / "hub.json").string()});
  if (port == 0) return {};
  auto a = testing::StartWorker(dir, "a", port), b = testing::StartWorker(dir, "b", port);
  EXPECT_EQ(a->Wait(300), 0) << a->Log();
  EXPECT_EQ(b->Wait(300), 0) << b->Log();
  EXPECT_EQ(hub->Wait(60), 0) << hub->Log();
  const std::string report = testing::ReadAll(dir / "hub.json");
  EXPECT_EQ(testing::JsonNumber(report, "steps"), 150) << report;
  Outcome o;
  o.accuracy = testing::JsonNumber(report, "test_accuracy");
  o.bytes_per_step = testing::JsonNumber(report, "gradient_bytes_per_step");
  for (const char* w : {"a", "b"}) o.resyncs += testing::JsonNumber(testing::ReadAll(dir / (std::string(w) + ".json")), "resyncs");
  fs::remove_all(dir);
  return o;
}

TEST(Compression, Fp16AndInt8TrainLikeNoneOnAQuarterToHalfTheBytes) {
  const fs::path data = testing::FreshTempDir("compress-data");
  testing::WriteIdxDataset(data.string(), 3000, 500, 21);
  std::map<std::string, Outcome> runs;
  for (const char* c : {"none", "fp16", "int8"}) runs[c] = Train(data, c);
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
  fs::remove_all(data);
}

}  // namespace
}  // namespace mt
