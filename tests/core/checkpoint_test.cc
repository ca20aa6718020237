#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/checkpoint/checkpoint.h"
#include "core/util/atomic_file.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class Checkpoints : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("mt-ckpt-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static Checkpoint Sample() {
    Checkpoint c;
    c.model_spec = "name: \"lenet5\"";
    c.step = 1234;
    c.epoch = 2;
    c.seed = 99;
    c.weights = {1.5f, -2.25f, 3.0f, 0.0f};
    c.optimizer.config.kind = OptimizerKind::kSgd;
    c.optimizer.config.lr = 0.05f;
    c.optimizer.steps = 1234;
    c.optimizer.slots = {0.1f, 0.2f, 0.3f, 0.4f};
    c.running_stats = {0.5f, 1.25f};
    c.global_batch = 77;
    return c;
  }
  // The CheckpointError loading `path` throws: what a user reads at --resume.
  std::string Error(const std::string& path) {
    try {
      LoadCheckpoint(path);
    } catch (const CheckpointError& e) {
      return e.what();
    }
    ADD_FAILURE() << path << " loaded";
    return "";
  }
  std::string Bytes(const std::string& path) { return ReadFile(path); }
  void Put(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
  }

  fs::path dir_;
};

TEST_F(Checkpoints, RoundTrip) {
  const std::string path = CheckpointPath(dir_.string(), 1234);
  SaveCheckpoint(path, Sample());
  const Checkpoint c = LoadCheckpoint(path);
  const Checkpoint s = Sample();
  EXPECT_EQ(c.model_spec, s.model_spec);
  EXPECT_EQ(c.step, s.step);
  EXPECT_EQ(c.epoch, s.epoch);
  EXPECT_EQ(c.seed, s.seed);
  EXPECT_EQ(c.weights, s.weights);
  EXPECT_EQ(c.optimizer.config.kind, OptimizerKind::kSgd);
  EXPECT_FLOAT_EQ(c.optimizer.config.lr, 0.05f);
  EXPECT_EQ(c.optimizer.steps, 1234);
  EXPECT_EQ(c.optimizer.slots, s.optimizer.slots);
  EXPECT_EQ(c.running_stats, s.running_stats);
  EXPECT_EQ(c.global_batch, 77);
  // Nothing but the checkpoint is left behind.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(Checkpoints, CorruptionIsDetectedAndNamesTheFile) {
  const std::string path = (dir_ / "c.mtc").string();
  SaveCheckpoint(path, Sample());
  const std::string good = Bytes(path);

  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x10;
  Put(path, flipped);
  EXPECT_THAT(Error(path), HasSubstr("c.mtc: checksum"));

  Put(path, good.substr(0, good.size() - 9));
  EXPECT_THAT(Error(path), HasSubstr("c.mtc"));

  std::string magic = good;
  magic[0] = 'X';
  Put(path, magic);
  EXPECT_THAT(Error(path), HasSubstr("bad magic"));

  std::string future = good;
  future[4] = 9;
  Put(path, future);
  EXPECT_THAT(Error(path), HasSubstr("version 9"));

  // Format 1 (before checkpoints were a proto message) is refused and says why.
  std::string older = good;
  older[4] = 1;
  Put(path, older);
  EXPECT_THAT(Error(path), HasSubstr("older mt"));

  EXPECT_THAT(Error((dir_ / "missing.mtc").string()), HasSubstr("missing.mtc"));
}

TEST_F(Checkpoints, UnwritableDirectoryIsAClearError) {
  Put((dir_ / "file").string(), "x");
  try {
    SaveCheckpoint((dir_ / "file" / "c.mtc").string(), Sample());
    FAIL();
  } catch (const CheckpointError& e) {
    EXPECT_THAT(e.what(), HasSubstr("file/c.mtc"));
  }
}

TEST_F(Checkpoints, OverwriteIsAtomic) {
  const std::string path = (dir_ / "c.mtc").string();
  SaveCheckpoint(path, Sample());
  Checkpoint next = Sample();
  next.step = 2000;
  SaveCheckpoint(path, next);
  EXPECT_EQ(LoadCheckpoint(path).step, 2000);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(Checkpoints, LatestAndPrune) {
  EXPECT_EQ(NewestValidCheckpoint(dir_.string()).path, "");
  for (int step : {5, 40, 300, 7}) SaveCheckpoint(CheckpointPath(dir_.string(), step), Sample());
  Put((dir_ / "ckpt-notanumber.mtc").string(), "x");
  EXPECT_EQ(NewestValidCheckpoint(dir_.string()).path, CheckpointPath(dir_.string(), 300));
  PruneCheckpoints(dir_.string(), 2);
  EXPECT_TRUE(fs::exists(CheckpointPath(dir_.string(), 300)));
  EXPECT_TRUE(fs::exists(CheckpointPath(dir_.string(), 40)));
  EXPECT_FALSE(fs::exists(CheckpointPath(dir_.string(), 7)));
  EXPECT_FALSE(fs::exists(CheckpointPath(dir_.string(), 5)));
  EXPECT_EQ(NewestValidCheckpoint((dir_ / "nope").string()).path, "");
}

TEST_F(Checkpoints, AValidChecksumDoesNotVouchForTheContent) {
  // Written by a broken run or crafted: the checksum is right, the content
  // would resume into a diverged model or a hang.
  auto refused = [&](auto damage, const std::string& says) {
    Checkpoint c = Sample();
    damage(c);
    const std::string path = CheckpointPath(dir_.string(), 1);
    SaveCheckpoint(path, c);
    EXPECT_THAT(Error(path), HasSubstr(says));
  };
  refused([](Checkpoint& c) { c.weights[2] = std::nanf(""); }, "1 of its 4 weights are not finite");
  refused([](Checkpoint& c) { c.weights[0] = INFINITY; }, "weights are not finite");
  refused([](Checkpoint& c) { c.optimizer.slots[1] = -INFINITY; }, "optimizer state");
  refused([](Checkpoint& c) { c.step = -5; }, "negative step");
  refused([](Checkpoint& c) { c.epoch = -1; }, "negative step");
  refused([](Checkpoint& c) { c.global_batch = -3; }, "global batch (-3)");
  refused([](Checkpoint& c) { c.weights.clear(); }, "holds no weights");
  refused([](Checkpoint& c) { c.running_stats[1] = std::nanf(""); },
          "1 of its 2 running statistics are not finite");
  // Its optimizer settings, as the command line's (issue 45: lr NaN or
  // 1e30 diverged the resumed run, momentum 2 trained).
  refused([](Checkpoint& c) { c.optimizer.config.lr = std::nanf(""); }, "lr is nan");
  refused([](Checkpoint& c) { c.optimizer.config.lr = 1e30f; }, "lr is 1e+30");
  refused([](Checkpoint& c) { c.optimizer.config.lr = 0; }, "lr is 0");
  refused([](Checkpoint& c) { c.optimizer.config.momentum = 2; }, "momentum is 2");
  refused([](Checkpoint& c) { c.optimizer.config.weight_decay = -1; }, "weight_decay");
  refused([](Checkpoint& c) { c.optimizer.config.beta2 = 1; }, "beta2");
  refused([](Checkpoint& c) { c.optimizer.config.eps = 0; }, "eps");
}

TEST_F(Checkpoints, OneWithoutRunningStatisticsStillLoads) {
  // Written before checkpoints carried them, or by a model without batch norm.
  Checkpoint c = Sample();
  c.running_stats.clear();
  const std::string path = CheckpointPath(dir_.string(), 3);
  SaveCheckpoint(path, c);
  EXPECT_TRUE(LoadCheckpoint(path).running_stats.empty());
}

TEST_F(Checkpoints, ResumeFallsBackToTheNewestThatLoadsAndSaysWhy) {
  EXPECT_EQ(NewestValidCheckpoint(dir_.string()).path, "");  // none: start afresh
  for (int step : {100, 200}) {
    Checkpoint c = Sample();
    c.step = step;
    SaveCheckpoint(CheckpointPath(dir_.string(), step), c);
  }
  const std::string newest = CheckpointPath(dir_.string(), 300);
  std::string bytes = Bytes(CheckpointPath(dir_.string(), 200));
  bytes[bytes.size() / 2] ^= 0x40;  // a flipped bit: the checksum fails
  Put(newest, bytes);
  Checkpoint nan = Sample();
  nan.step = 250;
  nan.weights[1] = std::nanf("");
  SaveCheckpoint(CheckpointPath(dir_.string(), 250), nan);

  const ResumePoint r = NewestValidCheckpoint(dir_.string());
  EXPECT_EQ(r.path, CheckpointPath(dir_.string(), 200));
  EXPECT_EQ(r.checkpoint.step, 200);
  ASSERT_EQ(r.skipped.size(), 2u);
  EXPECT_THAT(r.skipped[0], HasSubstr(newest + ": checksum mismatch"));
  EXPECT_THAT(r.skipped[1], HasSubstr("not finite"));

  // None loads: an error naming each, not a silent fresh start.
  fs::remove(CheckpointPath(dir_.string(), 100));
  fs::remove(CheckpointPath(dir_.string(), 200));
  try {
    NewestValidCheckpoint(dir_.string());
    FAIL() << "resumed from nothing valid";
  } catch (const CheckpointError& e) {
    EXPECT_THAT(e.what(), HasSubstr("can be resumed from"));
    EXPECT_THAT(e.what(), HasSubstr(newest));
  }
}

}  // namespace
}  // namespace mt
