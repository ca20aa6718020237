// An x86-64 hub training with an x86-64 worker and an arm64 worker (the
// cross build of deploy/cross-build.sh, run by user-mode QEMU): the arm64
// worker computes its half of each step with the NEON kernels, applies the
// optimizer to its own copy like everyone else, and its weights must match
// the hub's bit for bit at every step's digest. The same run with two x86
// workers is the accuracy to reach. Skipped where there is no arm64 build
// (MT_ARM64_BUILD_DIR, else build-arm64 in the source tree) or no
// qemu-aarch64.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "tests/support/cluster_processes.h"
#include "tests/support/files.h"
#include "tests/support/subprocess.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::ChildProcess;
using test_support::ReadJson;
using test_support::ReportedWorker;
using test_support::StartHub;
using test_support::StartWorker;

constexpr int kSteps = 300;

fs::path Arm64Worker() {
  const char* dir = std::getenv("MT_ARM64_BUILD_DIR");
  return fs::path(dir && *dir ? dir : MT_SOURCE_DIR "/build-arm64") / "worker" / "mtworker";
}

std::string Qemu() {
  for (const char* p : {"/usr/bin/qemu-aarch64", "/usr/bin/qemu-aarch64-static"})
    if (fs::exists(p)) return p;
  return "";
}

// One run of kSteps with a worker "x86" and a worker `second` started by
// `argv0` (the x86 mtworker, or qemu with the arm64 one); returns the hub's
// report. Equal fixed batches, so both runs give each worker the same
// samples whatever the join order; a generous fixed deadline, so the
// emulated worker is never left out.
json Train(const fs::path& dir, const std::string& second, std::vector<std::string> argv0) {
  std::unique_ptr<ChildProcess> hub;
  const int port =
      StartHub(hub, dir,
               {"--workers", "2", "--worker-batches", "8,8", "--steps", std::to_string(kSteps),
                "--digest-every", "1", "--step-deadline", "120", "--sync-every", "1",
                // Both runs as exact as per-step floats: the emulated worker
                // slows the exchange, which auto would meet with an encoding.
                // The default optimizer (Adam) at its default rate for this batch.
                "--compress", "none", "--report", (dir / "hub.json").string()});
  if (port <= 0) return {};
  auto x86 = StartWorker(dir, "x86", port, {"--threads", "1"});
  std::vector<std::string> argv = std::move(argv0);
  argv.insert(argv.end(), {"--hub", "127.0.0.1:" + std::to_string(port), "--name", second,
                           "--threads", "1", "--report", (dir / (second + ".json")).string()});
  ChildProcess other(argv, (dir / (second + ".log")).string());
  EXPECT_EQ(other.Wait(400), 0) << other.Log();
  EXPECT_EQ(x86->Wait(60), 0) << x86->Log();
  EXPECT_EQ(hub->Wait(60), 0) << hub->Log();
  return ReadJson(dir / "hub.json");
}

void ExpectEveryStepDigestMatched(const json& report, const std::string& name) {
  const json w = ReportedWorker(report, name);
  EXPECT_EQ(w.value("steps", int64_t{-1}), kSteps) << name << report.dump(2);
  EXPECT_EQ(w.value("steps_missed", int64_t{-1}), 0) << name;
  EXPECT_EQ(w.value("digests_checked", int64_t{-1}), kSteps) << name;
  EXPECT_EQ(w.value("resyncs", int64_t{-1}), 0) << name;
  EXPECT_EQ(w.value("samples", int64_t{-1}), 8 * kSteps) << name;
}

TEST(MixedArch, AnArm64WorkerUnderQemuTrainsBesideX86WithWeightsBitIdenticalToTheHubs) {
  if (!fs::exists("/usr/share/datasets/fashion-mnist"))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed (deploy/install-deps.sh installs it)";
  const fs::path arm64 = Arm64Worker();
  const std::string qemu = Qemu();
  if (!fs::exists(arm64) || qemu.empty())
    GTEST_SKIP() << "no arm64 mtworker at " << arm64 << " or no qemu-aarch64: run "
                 << "deploy/cross-build.sh arm64 (or set MT_ARM64_BUILD_DIR)";

  const fs::path x86_dir = test_support::FreshTempDir("mixed-arch-x86");
  const json x86_only = Train(x86_dir, "x86b", {test_support::BinaryPath("worker/mtworker")});
  ASSERT_FALSE(x86_only.is_null());
  const fs::path mixed_dir = test_support::FreshTempDir("mixed-arch");
  const json mixed = Train(mixed_dir, "arm64", {qemu, arm64.string()});
  ASSERT_FALSE(mixed.is_null());

  ExpectEveryStepDigestMatched(x86_only, "x86");
  ExpectEveryStepDigestMatched(x86_only, "x86b");
  ExpectEveryStepDigestMatched(mixed, "x86");
  ExpectEveryStepDigestMatched(mixed, "arm64");
  // The arm64 worker really ran on arm64: it reports what it was built for.
  EXPECT_EQ(ReadJson(mixed_dir / "arm64.json").value("arch", ""), "aarch64");
  EXPECT_EQ(ReadJson(mixed_dir / "x86.json").value("arch", ""), "x86_64");
  // The same samples and the same arithmetic but for the kernels' rounding
  // (NEON against AVX): step for step the same losses until training's
  // chaos amplifies the last bits. Adam does that sooner than SGD (2.5e-4
  // at step 76 here; SGD held 150 steps), so the first 50 are compared.
  const json& xs = x86_only["history"]["points"];
  const json& ms = mixed["history"]["points"];
  ASSERT_EQ(x86_only["history"].value("stride", 0), 1);
  ASSERT_EQ(mixed["history"].value("stride", 0), 1);
  ASSERT_EQ(xs.size(), ms.size());
  for (size_t i = 0; i < 50 && i < xs.size(); ++i)
    ASSERT_NEAR(ms[i].value("loss", -1.0), xs[i].value("loss", -2.0), 1e-4) << "step " << i + 1;
  // And so the accuracy an x86-only run reaches, within what a different
  // last bit does to 300 noisy steps (1.5 points here; a reseed moves it 5).
  const double a = x86_only.value("test_accuracy", -1.0);
  const double b = mixed.value("test_accuracy", -1.0);
  EXPECT_GT(a, 0.6) << x86_only.dump(2);
  EXPECT_GT(b, 0.6) << mixed.dump(2);
  EXPECT_NEAR(b, a, 0.05);
  if (!HasFailure()) {
    fs::remove_all(x86_dir);
    fs::remove_all(mixed_dir);
  }
}

}  // namespace
}  // namespace mt
