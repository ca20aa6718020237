// ParseHubOptions in process: what each flag puts into HubConfig (the exit
// codes and messages are in hub_cli_e2e_test.cc).
#include "hub/options/hub_options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace mt {
namespace {

// Parses mthub ARGS...; fails the test unless it goes on.
HubOptions Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "mthub");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  HubOptions options;
  const std::optional<int> exit_code =
      ParseHubOptions(static_cast<int>(argv.size()), argv.data(), options);
  EXPECT_FALSE(exit_code.has_value()) << "exit code " << exit_code.value_or(-1);
  return options;
}

TEST(HubOptions, DefaultsAreHubConfigs) {
  const HubConfig fresh;
  const HubConfig cfg = Parse({}).config;
  EXPECT_EQ(cfg.workers, fresh.workers);
  EXPECT_EQ(cfg.port, fresh.port);
  EXPECT_EQ(cfg.bind, fresh.bind);
  EXPECT_EQ(cfg.batch_policy, fresh.batch_policy);
  EXPECT_EQ(cfg.checkpoint_every, fresh.checkpoint_every);
  EXPECT_EQ(cfg.optimizer.lr, fresh.optimizer.lr);
  EXPECT_EQ(cfg.local_sgd.sync_every, fresh.local_sgd.sync_every);
  EXPECT_EQ(cfg.local_sgd.sync_every, 0);  // auto
  EXPECT_EQ(cfg.local_sgd.outer_momentum, fresh.local_sgd.outer_momentum);
  EXPECT_TRUE(cfg.worker_batches.empty());
  EXPECT_FALSE(cfg.resume);
}

TEST(HubOptions, FlagsFillTheConfig) {
  const HubOptions o = Parse({"--workers",
                              "3",
                              "--min-workers",
                              "2",
                              "--port",
                              "0",
                              "--port-file",
                              "/tmp/p",
                              "--worker-batches",
                              "8,8",
                              "--worker-batches",
                              "16,32,16",
                              "--compress",
                              "int8",
                              "--step-deadline",
                              "2.5",
                              "--seed",
                              "9",
                              "--optimizer",
                              "adam",
                              "--lr",
                              "0.01",
                              "--threads",
                              "2",
                              "--digest-every",
                              "5",
                              "--log-level",
                              "warn"});
  EXPECT_EQ(o.config.workers, 3);
  EXPECT_EQ(o.config.min_workers, 2);
  EXPECT_EQ(o.config.port, 0);
  EXPECT_EQ(o.port_file, "/tmp/p");
  EXPECT_EQ(o.config.worker_batches, (std::vector<int>{16, 32, 16}));  // given twice: the last list
  EXPECT_EQ(o.config.compression, Compression::kInt8);
  EXPECT_EQ(o.config.deadline.fixed_seconds, 2.5);
  EXPECT_EQ(o.config.seed, 9u);
  EXPECT_EQ(o.config.optimizer.kind, OptimizerKind::kAdam);
  EXPECT_FLOAT_EQ(o.config.optimizer.lr, 0.01f);
  EXPECT_EQ(o.config.threads, 2);
  EXPECT_EQ(o.config.digest_every, 5);
  EXPECT_EQ(o.log_level, "warn");
}

TEST(HubOptions, SyncEveryIsAutoOrAFixedNumberOfSteps) {
  EXPECT_EQ(Parse({"--sync-every", "auto"}).config.local_sgd.sync_every, 0);
  EXPECT_EQ(Parse({"--sync-every", "16"}).config.local_sgd.sync_every, 16);
  EXPECT_EQ(Parse({"--sync-every", "064"}).config.local_sgd.sync_every, 64);  // decimal, not octal
  EXPECT_EQ(Parse({"--outer-momentum", "0.5"}).config.local_sgd.outer_momentum, 0.5);
  EXPECT_EQ(Parse({"--outer-lr", "0.7"}).config.local_sgd.outer_lr, 0.7);
  EXPECT_FALSE(Parse({}).config.local_sgd.overlap_rounds);
  EXPECT_TRUE(Parse({"--overlap"}).config.local_sgd.overlap_rounds);
  EXPECT_TRUE(Parse({"--drift-correction"}).config.local_sgd.drift_correction);
  EXPECT_FALSE(Parse({"--no-drift-correction"}).config.local_sgd.drift_correction);
  // The correction is derived from the plain average, which an outer
  // optimizer replaces: a usage error, exit 2.
  for (const char* outer : {"--outer-momentum", "--outer-lr"}) {
    const char* argv[] = {"mthub", "--drift-correction", outer, "0.5"};
    HubOptions options;
    EXPECT_EQ(ParseHubOptions(4, argv, options), std::optional<int>(2)) << outer;
  }
}

// Adam at SGD's learning rate does not train (chance accuracy on LeNet-5):
// without --lr the rate is the optimizer's own for the global batch; a
// given --lr wins wherever it stands on the command line.
TEST(HubOptions, TheLearningRateDefaultFollowsTheOptimizerAndTheGlobalBatch) {
  // Adam, the default: 0.004 at a global batch of 64.
  EXPECT_EQ(Parse({}).config.optimizer.kind, OptimizerKind::kAdam);
  EXPECT_FLOAT_EQ(Parse({}).config.optimizer.lr, 0.004f);
  EXPECT_FLOAT_EQ(Parse({"--workers", "4"}).config.optimizer.lr, 0.008f);
  EXPECT_FLOAT_EQ(Parse({"--optimizer", "sgd"}).config.optimizer.lr, 0.05f);
  EXPECT_FLOAT_EQ(Parse({"--optimizer", "sgd", "--workers", "3"}).config.optimizer.lr,
                  0.05f);  // SGD: no scaling
  EXPECT_FLOAT_EQ(Parse({"--optimizer", "adam"}).config.optimizer.lr, 0.004f);
  // sqrt(global batch / 64): 64 per worker, --global-batch, --worker-batches.
  EXPECT_FLOAT_EQ(Parse({"--optimizer", "adam", "--workers", "4"}).config.optimizer.lr, 0.008f);
  EXPECT_FLOAT_EQ(
      Parse({"--optimizer", "adam", "--workers", "2", "--global-batch", "16"}).config.optimizer.lr,
      0.002f);
  EXPECT_FLOAT_EQ(Parse({"--optimizer", "adam", "--workers", "2", "--worker-batches", "100,156"})
                      .config.optimizer.lr,
                  0.008f);
  EXPECT_FLOAT_EQ(Parse({"--lr", "0.02", "--optimizer", "adam"}).config.optimizer.lr, 0.02f);
  EXPECT_FLOAT_EQ(Parse({"--optimizer", "adam", "--lr", "0.02"}).config.optimizer.lr, 0.02f);
}

TEST(HubOptions, ChoicesArriveAsTheirEnums) {
  EXPECT_EQ(Parse({}).config.aggregate, Aggregation::kAuto);
  EXPECT_EQ(Parse({"--aggregate", "trimmed-mean"}).config.aggregate, Aggregation::kTrimmedMean);
  EXPECT_EQ(Parse({"--aggregate", "median"}).config.aggregate, Aggregation::kMedian);
  EXPECT_EQ(Parse({}).config.batch_policy, BatchPolicy::kBalanced);
  EXPECT_EQ(Parse({"--batch-policy", "fixed"}).config.batch_policy, BatchPolicy::kFixed);
  EXPECT_EQ(Parse({"--compress", "fp16"}).config.compression, Compression::kFp16);
  EXPECT_EQ(Parse({}).config.compression, std::nullopt);  // auto
  EXPECT_EQ(Parse({"--compress", "topk"}).config.compression, Compression::kTopK);
  EXPECT_EQ(Parse({"--compress", "auto"}).config.compression, std::nullopt);
  // The report's and the dashboard's name for it works as well.
  EXPECT_EQ(Parse({"--compression", "int8"}).config.compression, Compression::kInt8);
}

TEST(HubOptions, EvaluationFlagsFillTheSharedRunSettings) {
  const HubConfig cfg =
      Parse({"--eval-every", "25", "--patience", "3", "--target-accuracy", "0.8"}).config;
  EXPECT_EQ(cfg.eval_every, 25);
  EXPECT_EQ(cfg.patience, 3);
  EXPECT_DOUBLE_EQ(cfg.target_accuracy, 0.8);
  const LoopSettings& loop = cfg;  // what the training loop takes
  EXPECT_EQ(loop.eval_every, 25);
  EXPECT_EQ(loop.patience, 3);
  EXPECT_DOUBLE_EQ(loop.target_accuracy, 0.8);
  EXPECT_EQ(loop.checkpoint_every, 100);  // the hub's default, unlike standalone's 0
}

TEST(HubOptions, ResumeNamesTheCheckpointDirectory) {
  const HubConfig alone = Parse({"--resume", "/tmp/ck"}).config;
  EXPECT_TRUE(alone.resume);
  EXPECT_EQ(alone.checkpoint_dir, "/tmp/ck");
  const HubConfig same = Parse({"--resume", "/tmp/ck", "--checkpoint-dir", "/tmp/ck"}).config;
  EXPECT_TRUE(same.resume);
  EXPECT_EQ(same.checkpoint_dir, "/tmp/ck");
}

TEST(HubOptions, PrivacyFlagsFillTheDpSettings) {
  EXPECT_FALSE(Parse({}).config.dp.enabled());
  const DpSettings given = Parse({"--dp-clip", "0.5", "--dp-noise", "1.2"}).config.dp;
  EXPECT_EQ(given.clip, 0.5);
  EXPECT_EQ(given.noise_multiplier, 1.2);
  EXPECT_EQ(given.target_epsilon, 0);
  EXPECT_EQ(given.delta, 1e-5);
  EXPECT_EQ(given.noise_at, DpNoiseAt::kHub);
  const DpSettings solved =
      Parse({"--dp-clip", "1", "--dp-epsilon", "8", "--dp-delta", "1e-6"}).config.dp;
  EXPECT_EQ(solved.target_epsilon, 8);
  EXPECT_EQ(solved.noise_multiplier, 0);  // the Hub solves it once it knows the run's length
  EXPECT_EQ(solved.delta, 1e-6);
}

}  // namespace
}  // namespace mt
