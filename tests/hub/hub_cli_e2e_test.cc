// mthub's command line as a user meets it: real processes, their exit codes
// and what they say; and the shared secret from a file and the environment,
// with a hub and workers that use it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "core/util/build_target.h"
#include "proto/wire.h"
#include "tests/support/cluster_processes.h"
#include "tests/support/console_text.h"
#include "tests/support/events.h"
#include "tests/support/files.h"
#include "tests/support/idx_writer.h"
#include "tests/support/subprocess.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using test_support::BinaryPath;
using test_support::ChildProcess;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;

test_support::ProcessResult RunHub(std::vector<std::string> args) {
  args.insert(args.begin(), BinaryPath("hub/mthub"));
  return test_support::RunProcess(args, 60);
}

// Relations between flags that the Hub constructor also refuses, but only
// after loading the data, as a runtime failure (exit 1). The command line
// refuses them first: exit 2, and the dataset named here does not exist, so
// a hub that got past its command line would fail differently.
TEST(HubCliE2e, FlagsThatContradictEachOtherExit2) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--workers", "3", "--worker-batches", "16,32"},
       "--worker-batches gives 2 sizes but --workers is 3; give one size per worker"},
      {{"--workers", "2", "--global-batch", "1"}, "--global-batch 1 is smaller than --workers 2"},
      {{"--workers", "2", "--min-workers", "3"}, "--min-workers 3 cannot exceed --workers 2"},
      {{"--worker-batches", "8", "--batch-policy", "balanced"},
       "--worker-batches fixes each worker's batch; it cannot go with --batch-policy balanced"},
      {{"--workers", "2", "--worker-batches", "8,8", "--global-batch", "20"},
       "--global-batch 20 is not the sum of --worker-batches (16)"},
      {{"--resume", "/tmp/mt-a", "--checkpoint-dir", "/tmp/mt-b"},
       "--resume /tmp/mt-a and --checkpoint-dir /tmp/mt-b differ; give one directory"},
      {{"--token", "a", "--token-file", "/etc/hostname"},
       "--token and --token-file both give the secret"},
      {{"--token-file", "/nonexistent/mt-token"},
       "--token-file /nonexistent/mt-token: cannot read it"},
      // Adam, the default, has no momentum: issue 44's PyTorch habit.
      {{"--lr", "0.05", "--momentum", "0.9"}, "add --optimizer sgd"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    args.insert(args.end(), {"--dataset", "/nonexistent/mt-data", "--port", "0"});
    const auto r = RunHub(args);
    EXPECT_EQ(r.exit_code, 2) << c.says << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(c.says));
    EXPECT_THAT(r.output, HasSubstr("(see mthub --help)"));
  }
}

TEST(HubCliE2e, BadValuesNameTheirFlag) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--workers", "0"}, "--workers: expected an integer in 1..4096, got '0'"},
      {{"--port", "65536"}, "--port: expected an integer in 0..65535, got '65536'"},
      {{"--worker-batches", "8,x"}, "--worker-batches: expected an integer in 1..1048576, got 'x'"},
      {{"--lr", "1e-12"}, "--lr: expected a number in 1e-09..100, got '1e-12'"},
      {{"--momentum", "nan"}, "--momentum: expected a number in 0..0.9999, got 'nan'"},
      {{"--seed", "-1"}, "--seed: expected an integer >= 0, got '-1'"},
      {{"--compress", "zip"}, "--compress: zip not in {auto,none,fp16,int8,topk,lowrank}"},
      {{"--sync-every", "0"}, "--sync-every: expected auto or an integer in 1..64, got '0'"},
      {{"--sync-every", "Auto"}, "--sync-every: expected auto or an integer in 1..64, got 'Auto'"},
      {{"--outer-momentum", "1"}, "--outer-momentum: expected a number in 0..0.99, got '1'"},
      {{"--log-level", "verbose"}, "--log-level: verbose not in {trace,debug,info,warn,error,off}"},
      {{"--report", ""}, "--report: empty value"},
      {{"--epochs"}, "--epochs"},
      {{"stray"}, "stray"},
  };
  for (const Case& c : cases) {
    const auto r = RunHub(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.says << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(c.says));
  }
}

TEST(HubCliE2e, VersionNamesTheProgramTheWireProtocolAndTheBuildTarget) {
  const auto r = RunHub({"--version"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, ContainsRegex("^mthub [0-9]+\\.[0-9]+\\.[0-9]+ "));
  EXPECT_THAT(r.output, HasSubstr("(wire protocol " + std::to_string(wire::kProtocolVersion) +
                                  "; " + kBuildArch + ", " + kBuildSimd + ")"));
}

// A mistyped flag is named with the flag it was probably meant to be.
TEST(HubCliE2e, ATypoGetsTheNearestFlag) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--workres", "3"}, "unknown option --workres; did you mean --workers?"},
      {{"--wrkers", "3"}, "unknown option --wrkers; did you mean --workers?"},
      {{"--sync-evry=auto"}, "unknown option --sync-evry; did you mean --sync-every?"},
      {{"--chekpoint-dir", "/tmp/x"}, "did you mean --checkpoint-dir?"},
      {{"--workers", "2", "--aggergate", "median"}, "did you mean --aggregate?"},
  };
  for (const Case& c : cases) {
    const auto r = RunHub(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.says << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(c.says));
  }
  // Nothing near: named, with no guess.
  const auto r = RunHub({"--frobnicate"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("unknown option --frobnicate (see mthub --help)"));
}

TEST(HubCliE2e, HelpShowsEveryFlagWithItsDefaultAndRange) {
  const auto r = RunHub({"--help"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(test_support::LinesWiderThan(r.output, 80), "");
  for (const char* text :
       {"--workers N", "[1 to 4096; default 1]", "--port N", "[0 to 65535; default 50051]",
        "--worker-batches N[,...]", "--batch-policy fixed|balanced", "[default balanced]",
        "--checkpoint-every N", "[0 or more; default 100]", "--token SECRET", "--token-file FILE",
        "MT_TOKEN", "--log-level trace|debug|info|warn|error|off", "--version", "--help",
        "Exit codes: 0 done"})
    EXPECT_THAT(test_support::OneLine(r.output), HasSubstr(text));
}

// A test split of another image size than the training split (14x14 or
// 1x1 beside 28x28) once crashed the hub (SIGSEGV) at its first evaluation.
// Both the hub and a standalone worker refuse it before training: exit 1,
// naming the split and both shapes.
TEST(HubCliE2e, ATestSplitOfAnotherShapeIsRefusedNotACrash) {
  for (const int side : {14, 1}) {
    const fs::path dir = test_support::FreshTempDir("hub-cli-split-" + std::to_string(side));
    test_support::WriteIdxSplit(dir.string(), "train", 256, 3);
    test_support::WriteIdxSplit(dir.string(), "t10k", 64, 4, side);
    const std::string shape = "1x" + std::to_string(side) + "x" + std::to_string(side);
    const auto hub = RunHub({"--workers", "1", "--dataset", dir.string(), "--steps", "3", "--port",
                             "0", "--http-port", "0"});
    EXPECT_EQ(hub.exit_code, 1) << hub.output;
    EXPECT_THAT(hub.output, HasSubstr("test split has samples of " + shape));
    EXPECT_THAT(hub.output, HasSubstr("the model takes 1x28x28"));
    const auto standalone = test_support::RunProcess(
        {BinaryPath("worker/mtworker"), "--standalone", "--dataset", dir.string(), "--steps", "3"},
        60);
    EXPECT_EQ(standalone.exit_code, 1) << standalone.output;
    EXPECT_THAT(standalone.output, HasSubstr("test split has samples of " + shape));
    fs::remove_all(dir);
  }
}

// The hub reads its secret from a file (first line, trailing white space
// dropped); workers give it through MT_TOKEN or --token, --token winning
// over MT_TOKEN; a worker with the wrong secret is refused.
TEST(HubCliE2e, SecretFromAFileAndTheEnvironment) {
  const fs::path dir = test_support::FreshTempDir("hub-cli-token");
  test_support::WriteIdxDataset(dir.string(), 512, 128, 9);
  std::ofstream(dir / "token") << "s3cret \t\nnot this line\n";
  std::unique_ptr<ChildProcess> hub;
  const int port = test_support::StartHub(hub, dir,
                                          {"--workers", "2", "--dataset", dir.string(), "--steps",
                                           "3", "--token-file", (dir / "token").string()});
  ASSERT_GT(port, 0);
  const std::string address = "127.0.0.1:" + std::to_string(port);
  auto worker = [&](const std::string& name, const std::string& env_token,
                    std::vector<std::string> extra) {
    std::vector<std::string> argv = {"/usr/bin/env",
                                     "MT_TOKEN=" + env_token,
                                     BinaryPath("worker/mtworker"),
                                     "--hub",
                                     address,
                                     "--name",
                                     name,
                                     "--connect-timeout",
                                     "30"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return std::make_unique<ChildProcess>(argv, (dir / (name + ".log")).string());
  };

  auto intruder = worker("intruder", "s3cret \t", {});  // the file's line before stripping
  EXPECT_EQ(intruder->Wait(60), 1) << intruder->Log();
  EXPECT_THAT(intruder->Log(), HasSubstr("wrong or missing token"));

  auto from_env = worker("from-env", "s3cret", {});
  auto from_flag = worker("from-flag", "wrong", {"--token", "s3cret"});
  EXPECT_EQ(from_env->Wait(120), 0) << from_env->Log();
  EXPECT_EQ(from_flag->Wait(120), 0) << from_flag->Log();
  EXPECT_EQ(hub->Wait(60), 0) << hub->Log();
  const fs::path events = test_support::EventsOf(dir, "hub");
  EXPECT_EQ(test_support::CountEvents(events, "worker_joined", {{"name", "intruder"}}), 0);
  EXPECT_EQ(test_support::CountEvents(events, "worker_joined", {{"name", "from-env"}}), 1);
  EXPECT_EQ(test_support::CountEvents(events, "worker_joined", {{"name", "from-flag"}}), 1);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mt
