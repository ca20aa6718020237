// ParseWorkerOptions in process: what each flag puts into WorkerConfig and
// StandaloneConfig (the exit codes and messages are in cli_e2e_test.cc).
#include "worker/worker_options.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/util/process_stats.h"
#include "tests/support/files.h"

namespace mt {
namespace {

// Parses mtworker ARGS...; fails the test unless it goes on.
WorkerOptions Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "mtworker");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  WorkerOptions options;
  const std::optional<int> exit_code =
      ParseWorkerOptions(static_cast<int>(argv.size()), argv.data(), options);
  EXPECT_FALSE(exit_code.has_value()) << "exit code " << exit_code.value_or(-1);
  return options;
}

int64_t Budget(const std::string& size) {
  return Parse({"--hub", "127.0.0.1:1", "--memory-budget", size}).hub_mode.memory_budget_bytes;
}

TEST(WorkerOptions, MemoryBudgetSizesAreBytesInPowersOf1024) {
  EXPECT_EQ(Budget("256M"), 256LL << 20);
  EXPECT_EQ(Budget("1G"), 1LL << 30);
  EXPECT_EQ(Budget("300000K"), 300000LL << 10);
  EXPECT_EQ(Budget("1048576"), 1048576);
  EXPECT_EQ(Budget("1.5G"), 3LL << 29);
  EXPECT_EQ(Budget("64KiB"), 64LL << 10);
  EXPECT_EQ(Budget("none"), 0);  // no limit
}

// The default, auto: half of what /proc/meminfo says is available (which
// moves while the test runs, so within a tenth of it).
TEST(WorkerOptions, TheMemoryBudgetDefaultsToHalfTheAvailableMemory) {
  const double available = static_cast<double>(AvailableMemoryBytes());
  ASSERT_GT(available, 0) << "no MemAvailable in /proc/meminfo";
  for (const int64_t budget :
       {Parse({"--hub", "127.0.0.1:1"}).hub_mode.memory_budget_bytes, Budget("auto")}) {
    EXPECT_NEAR(static_cast<double>(budget), 0.5 * available, 0.1 * available);
  }
}

TEST(WorkerOptions, HubModeGetsTheSharedFlags) {
  const WorkerOptions o =
      Parse({"--hub", "127.0.0.1:1234", "--device", "auto", "--threads", "3", "--report",
             "/tmp/r.json", "--log-every", "0.5", "--name", "phone", "--min-battery", "30",
             "--require-charging", "--max-temperature", "45", "--slowdown", "2"});
  EXPECT_FALSE(o.standalone);
  EXPECT_EQ(o.hub_mode.hub, "127.0.0.1:1234");
  EXPECT_EQ(o.hub_mode.device, DeviceChoice::kAuto);
  EXPECT_EQ(o.hub_mode.threads, 3);
  EXPECT_EQ(o.hub_mode.report_path, "/tmp/r.json");
  EXPECT_EQ(o.hub_mode.log_every_seconds, 1.0);  // at least 1 s in hub mode
  EXPECT_EQ(o.hub_mode.name, "phone");
  EXPECT_EQ(o.hub_mode.policy.min_battery_percent, 30);
  EXPECT_TRUE(o.hub_mode.policy.require_charging);
  EXPECT_EQ(o.hub_mode.policy.max_temperature_c, 45);
  EXPECT_EQ(o.hub_mode.slowdown, 2);
}

// The worker's settings in both modes (worker/worker_settings.h), field by
// field: what the two modes must read alike.
void ExpectSameSettings(const WorkerSettings& a, const WorkerSettings& b) {
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.threads, b.threads);
  EXPECT_EQ(a.report_path, b.report_path);
  EXPECT_EQ(a.trace_path, b.trace_path);
  EXPECT_EQ(a.profile, b.profile);
  EXPECT_EQ(a.recompute, b.recompute);
  EXPECT_EQ(a.activation_precision, b.activation_precision);
}

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The flags both modes share are bound once: the same words give
// --standalone and --hub the same settings, and not the defaults.
TEST(WorkerOptions, SharedFlagsParseTheSameInBothModes) {
  const std::vector<std::string> shared = {"--device",
                                           "auto",
                                           "--threads",
                                           "3",
                                           "--report",
                                           "/tmp/r.json",
                                           "--trace",
                                           "/tmp/t.json",
                                           "--profile",
                                           "--recompute",
                                           "--activation-precision",
                                           "fp16"};
  const WorkerOptions alone = Parse(Concat({"--standalone"}, shared));
  const WorkerOptions hub = Parse(Concat({"--hub", "127.0.0.1:1"}, shared));
  ExpectSameSettings(alone.standalone_mode, hub.hub_mode);
  const WorkerSettings& s = hub.hub_mode;
  EXPECT_EQ(s.device, DeviceChoice::kAuto);
  EXPECT_EQ(s.threads, 3);
  EXPECT_EQ(s.report_path, "/tmp/r.json");
  EXPECT_EQ(s.trace_path, "/tmp/t.json");
  EXPECT_TRUE(s.profile);
  EXPECT_TRUE(s.recompute);
  EXPECT_EQ(s.activation_precision, ActivationPrecision::kFp16);
  EXPECT_NE(ActivationPrecision::kFp16, WorkerSettings{}.activation_precision);
}

TEST(WorkerOptions, SharedDefaultsAreTheSameInBothModes) {
  const WorkerOptions alone = Parse({"--standalone"});
  const WorkerOptions hub = Parse({"--hub", "127.0.0.1:1"});
  ExpectSameSettings(alone.standalone_mode, hub.hub_mode);
  ExpectSameSettings(hub.hub_mode, WorkerSettings{});
  // --log-every is the one shared flag a mode reads differently: at least
  // 1 s with a hub.
  EXPECT_EQ(Parse({"--standalone", "--log-every", "0.5"}).standalone_mode.log_every_seconds, 0.5);
  EXPECT_EQ(Parse({"--hub", "127.0.0.1:1", "--log-every", "0.5"}).hub_mode.log_every_seconds, 1.0);
}

TEST(WorkerOptions, StandaloneFlagsAndDefaults) {
  const WorkerOptions defaults = Parse({"--standalone"});
  const StandaloneConfig fresh;
  EXPECT_TRUE(defaults.standalone);
  EXPECT_EQ(defaults.standalone_mode.batch, fresh.batch);
  EXPECT_EQ(defaults.standalone_mode.optimizer.lr, fresh.optimizer.lr);
  EXPECT_EQ(defaults.standalone_mode.seed, fresh.seed);

  const WorkerOptions o = Parse({"--standalone",
                                 "--batch",
                                 "32",
                                 "--epochs",
                                 "3",
                                 "--steps",
                                 "010",
                                 "--optimizer",
                                 "sgd",
                                 "--lr",
                                 "0.01",
                                 "--momentum",
                                 "0.5",
                                 "--weight-decay",
                                 "0.0001",
                                 "--seed",
                                 "42",
                                 "--checkpoint-dir",
                                 "/tmp/ck",
                                 "--checkpoint-every",
                                 "5",
                                 "--resume",
                                 "--batch",
                                 "16"});
  EXPECT_EQ(o.standalone_mode.batch, 16);  // given twice: the last one
  EXPECT_EQ(o.standalone_mode.epochs, 3);
  EXPECT_EQ(o.standalone_mode.max_steps, 10);  // decimal, not octal
  EXPECT_EQ(o.standalone_mode.optimizer.kind, OptimizerKind::kSgd);
  EXPECT_FLOAT_EQ(o.standalone_mode.optimizer.lr, 0.01f);
  EXPECT_FLOAT_EQ(o.standalone_mode.optimizer.momentum, 0.5f);
  EXPECT_FLOAT_EQ(o.standalone_mode.optimizer.weight_decay, 0.0001f);
  EXPECT_EQ(o.standalone_mode.seed, 42u);
  EXPECT_EQ(o.standalone_mode.checkpoint_dir, "/tmp/ck");
  EXPECT_EQ(o.standalone_mode.checkpoint_every, 5);
  EXPECT_TRUE(o.standalone_mode.resume);
}

TEST(WorkerOptions, TheLearningRateDefaultFollowsTheOptimizerAndTheBatch) {
  // Adam, the default.
  EXPECT_EQ(Parse({"--standalone"}).standalone_mode.optimizer.kind, OptimizerKind::kAdam);
  EXPECT_FLOAT_EQ(Parse({"--standalone"}).standalone_mode.optimizer.lr, 0.004f);
  EXPECT_FLOAT_EQ(Parse({"--standalone", "--batch", "256"}).standalone_mode.optimizer.lr, 0.008f);
  EXPECT_FLOAT_EQ(Parse({"--standalone", "--optimizer", "sgd"}).standalone_mode.optimizer.lr,
                  0.05f);
  EXPECT_FLOAT_EQ(
      Parse({"--standalone", "--optimizer", "sgd", "--batch", "256"}).standalone_mode.optimizer.lr,
      0.05f);
  EXPECT_FLOAT_EQ(Parse({"--standalone", "--optimizer", "adam"}).standalone_mode.optimizer.lr,
                  0.004f);
  EXPECT_FLOAT_EQ(
      Parse({"--standalone", "--optimizer", "adam", "--batch", "256"}).standalone_mode.optimizer.lr,
      0.008f);
  EXPECT_FLOAT_EQ(
      Parse({"--standalone", "--lr", "0.3", "--optimizer", "adam"}).standalone_mode.optimizer.lr,
      0.3f);
}

TEST(WorkerOptions, DeviceWordsBecomeTheirChoice) {
  EXPECT_EQ(Parse({"--standalone"}).standalone_mode.device, DeviceChoice::kCpu);
  EXPECT_EQ(Parse({"--hub", "127.0.0.1:1"}).hub_mode.device, DeviceChoice::kCpu);
  for (const auto& [word, choice] : DeviceChoiceWords()) {
    EXPECT_EQ(Parse({"--standalone", "--device", word}).standalone_mode.device, choice) << word;
    EXPECT_EQ(Parse({"--hub", "127.0.0.1:1", "--device", word}).hub_mode.device, choice) << word;
    EXPECT_EQ(ParseDeviceChoice(word), choice);
    EXPECT_EQ(DeviceChoiceName(choice), word);
  }
  EXPECT_EQ(DeviceChoiceWords().size(), 3u);
  EXPECT_EQ(ParseDeviceChoice("gpu"), std::nullopt);
  EXPECT_EQ(ParseDeviceChoice("CPU"), std::nullopt);
  EXPECT_EQ(DeviceChoiceList(), "auto, cpu or opencl");
}

TEST(WorkerOptions, FaultInjectionIsNotAProductionFlag) {
  // Only the test build tests/mtworker_faulty corrupts what it sends.
  const char* argv[] = {"mtworker", "--hub", "127.0.0.1:1", "--corrupt-gradients", "sign-flip"};
  WorkerOptions options;
  EXPECT_EQ(ParseWorkerOptions(5, argv, options), std::optional<int>(2));
}

TEST(WorkerOptions, TokenPrecedence) {
  const std::filesystem::path dir = test_support::FreshTempDir("worker-options-token");
  std::ofstream(dir / "token") << "from-file  \r\nsecond\n";
  const std::string file = (dir / "token").string();
  unsetenv("MT_TOKEN");
  EXPECT_EQ(Parse({"--hub", "127.0.0.1:1"}).hub_mode.token, "");
  setenv("MT_TOKEN", "from-env", 1);
  EXPECT_EQ(Parse({"--hub", "127.0.0.1:1"}).hub_mode.token, "from-env");
  EXPECT_EQ(Parse({"--hub", "127.0.0.1:1", "--token", "from-flag"}).hub_mode.token, "from-flag");
  EXPECT_EQ(Parse({"--hub", "127.0.0.1:1", "--token-file", file}).hub_mode.token, "from-file");
  unsetenv("MT_TOKEN");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace mt
