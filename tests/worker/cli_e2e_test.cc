// mtworker's command line as a user meets it: real processes, their exit
// codes and what they say. Every mistake exits 2, before anything starts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
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
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Worker() { return test_support::BinaryPath("worker/mtworker"); }

test_support::ProcessResult RunWorker(std::vector<std::string> args, double timeout_s = 60) {
  args.insert(args.begin(), Worker());
  return test_support::RunProcess(args, timeout_s);
}

// With MT_TOKEN=`token` in its environment.
test_support::ProcessResult RunWorkerWithToken(const std::string& token,
                                               std::vector<std::string> args) {
  args.insert(args.begin(), {"/usr/bin/env", "MT_TOKEN=" + token, Worker()});
  return test_support::RunProcess(args, 60);
}

// A hub address that resolves; nothing listens there, and --connect-timeout
// keeps a worker that wrongly got past its command line from waiting long.
const std::vector<std::string> kHubMode = {"--hub", "127.0.0.1:1", "--connect-timeout", "1"};

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Each flag that only --standalone takes, with a valid value.
const std::vector<std::vector<std::string>> kStandaloneOnly = {{"--epochs", "2"},
                                                               {"--steps", "5"},
                                                               {"--lr", "0.1"},
                                                               {"--momentum", "0.5"},
                                                               {"--weight-decay", "0.01"},
                                                               {"--optimizer", "adam"},
                                                               {"--batch", "32"},
                                                               {"--model", "lenet5"},
                                                               {"--dataset", "mnist"},
                                                               {"--seed", "7"},
                                                               {"--checkpoint-dir", "/tmp"},
                                                               {"--checkpoint-every", "10"},
                                                               {"--resume"}};

// Each flag that only hub mode takes, with a valid value.
const std::vector<std::vector<std::string>> kHubOnly = {{"--name", "w"},
                                                        {"--token", "s"},
                                                        {"--token-file", "/etc/hostname"},
                                                        {"--connect-timeout", "5"},
                                                        {"--memory-budget", "256M"},
                                                        {"--data", "/tmp"},
                                                        {"--min-battery", "30"},
                                                        {"--require-charging"},
                                                        {"--max-temperature", "70"},
                                                        {"--slowdown", "2"}};

TEST(WorkerCliE2e, HubModeRefusesWhatTheHubDecides) {
  for (const auto& flag : kStandaloneOnly) {
    const auto r = RunWorker(Concat(kHubMode, flag));
    EXPECT_EQ(r.exit_code, 2) << flag[0] << "\n" << r.output;
    EXPECT_THAT(r.output,
                HasSubstr(flag[0] + " belongs to the hub (set it on mthub) or to --standalone"))
        << flag[0];
  }
  const auto both = RunWorker(Concat(kHubMode, {"--lr", "0.1", "--epochs", "3"}));
  EXPECT_EQ(both.exit_code, 2) << both.output;
  EXPECT_THAT(both.output, HasSubstr("--epochs, --lr belong to the hub (set them on mthub)"));
}

TEST(WorkerCliE2e, StandaloneRefusesHubModeFlags) {
  for (const auto& flag : kHubOnly) {
    // --steps 1: a worker that wrongly accepted the flag would train briefly
    // and exit 0, not 2.
    const auto r = RunWorker(Concat({"--standalone", "--steps", "1"}, flag));
    EXPECT_EQ(r.exit_code, 2) << flag[0] << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(flag[0] + " is for hub mode (--hub) only")) << flag[0];
  }
}

TEST(WorkerCliE2e, ExactlyOneMode) {
  auto r = RunWorker({});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("give either --hub HOST[:PORT] or --standalone"));
  r = RunWorker({"--standalone", "--hub", "127.0.0.1:1"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--hub and --standalone cannot go together"));
}

TEST(WorkerCliE2e, BadHubAddressFailsAtOnceInsteadOfWaitingForTheHub) {
  struct Case {
    std::string hub, says;
  };
  for (const Case& c :
       {Case{"127.0.0.1:abc", "port 'abc' is not a number"},
        Case{"127.0.0.1:70000", "port '70000' is not a number"},
        Case{"no-such-host.invalid:50051", "cannot resolve 'no-such-host.invalid'"}}) {
    const auto start = std::chrono::steady_clock::now();
    // Waiting for the hub would take the whole --connect-timeout; the
    // process is killed (-1) well before that.
    const auto r = RunWorker({"--hub", c.hub, "--connect-timeout", "60"}, 20);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(r.exit_code, 2) << c.hub << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr("--hub: hub address '" + c.hub + "'"));
    EXPECT_THAT(r.output, HasSubstr(c.says));
    // A process start and a failed lookup; the margin is for a loaded machine.
    EXPECT_LT(seconds, 3.0) << c.hub;
  }
}

TEST(WorkerCliE2e, BadValuesNameTheirFlag) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--memory-budget", "lots"},
       "--memory-budget: expected a size such as 256M, 256MB, 256MiB or 1G"},
      {{"--memory-budget", "0"}, "--memory-budget: expected a size"},
      {{"--memory-budget", "12Q"}, "--memory-budget: expected a size"},
      {{"--memory-budget", "-5M"}, "--memory-budget: expected a size"},
      {{"--min-battery", "101"}, "--min-battery: expected an integer in 0..100, got '101'"},
      {{"--threads", "0"}, "--threads: expected an integer in 1..256, got '0'"},
      {{"--device", "gpu"}, "--device: gpu not in {auto,cpu,opencl}"},
      {{"--log-level", "loud"}, "--log-level: loud not in {trace,debug,info,warn,error,off}"},
      {{"--name", ""}, "--name: empty value"},
      {{"--frobnicate"}, "--frobnicate"},
  };
  for (const Case& c : cases) {
    const auto r = RunWorker(Concat(kHubMode, c.args));
    EXPECT_EQ(r.exit_code, 2) << c.args[0] << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(c.says));
    EXPECT_THAT(r.output, HasSubstr("(see mtworker --help)"));
  }
}

TEST(WorkerCliE2e, OnlyTheTestBuildCorruptsGradients) {
  const auto production = RunWorker(Concat(kHubMode, {"--corrupt-gradients", "sign-flip"}));
  EXPECT_EQ(production.exit_code, 2) << production.output;
  EXPECT_THAT(production.output, HasSubstr("--corrupt-gradients"));

  const std::string faulty = test_support::BinaryPath("tests/mtworker_faulty");
  const auto bad_kind = test_support::RunProcess(
      Concat({faulty}, Concat(kHubMode, {"--corrupt-gradients", "flip"})), 60);
  EXPECT_EQ(bad_kind.exit_code, 2) << bad_kind.output;
  EXPECT_THAT(bad_kind.output, HasSubstr("expected none, sign-flip, scale:X, flt-max, bias:X"));
  const auto alone =
      test_support::RunProcess({faulty, "--standalone", "--corrupt-gradients", "sign-flip"}, 60);
  EXPECT_EQ(alone.exit_code, 2) << alone.output;
  // Past its command line: it tries the hub, which is not there (exit 1).
  const auto hub_mode = test_support::RunProcess(
      Concat({faulty}, Concat(kHubMode, {"--corrupt-gradients=scale:1e4"})), 60);
  EXPECT_EQ(hub_mode.exit_code, 1) << hub_mode.output;
  EXPECT_THAT(hub_mode.output, HasSubstr("not reachable"));
}

// CLI11 runs every option's validators before it answers --help, so
// "ARGS... --help" exiting 0 says ARGS were accepted (deploy/systemd/verify.sh
// relies on the same).
TEST(WorkerCliE2e, MemoryBudgetTakesTheSizesTheDocsShow) {
  for (const std::string size :
       {"256M", "1G", "300000K", "1048576", "64K", "1.5G", "512MiB", "256MB", "1GB", "64kb"}) {
    const auto r = RunWorker(Concat(kHubMode, {"--memory-budget", size, "--help"}));
    EXPECT_EQ(r.exit_code, 0) << size << "\n" << r.output;
  }
  const auto r = RunWorker(Concat(kHubMode, {"--memory-budget", "256XB"}));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("256M, 256MB, 256MiB or 1G"));
}

TEST(WorkerCliE2e, TokenFileProblemsNameTheFile) {
  const fs::path dir = test_support::FreshTempDir("worker-cli-token");
  const std::string missing = (dir / "missing").string();
  auto r = RunWorker(Concat(kHubMode, {"--token-file", missing}));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--token-file " + missing + ": cannot read it"));

  std::ofstream(dir / "empty") << "   \nsecond line\n";
  r = RunWorker(Concat(kHubMode, {"--token-file", (dir / "empty").string()}));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output,
              HasSubstr("--token-file " + (dir / "empty").string() + ": its first line is empty"));

  std::ofstream(dir / "token") << "s3cret\n";
  r = RunWorker(Concat(kHubMode, {"--token", "s3cret", "--token-file", (dir / "token").string()}));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--token and --token-file both give the secret"));

  // MT_TOKEN is the environment's, not a command-line choice: --standalone
  // ignores it rather than refusing to run.
  const fs::path data = dir / "data";
  fs::create_directories(data);
  test_support::WriteIdxDataset(data.string(), 256, 64, 3);
  // Enough steps to leave chance, which a standalone run would report as a failure (exit 1).
  r = RunWorkerWithToken("s3cret", {"--standalone", "--dataset", data.string(), "--steps", "10"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  fs::remove_all(dir);
}

TEST(WorkerCliE2e, VersionNamesTheProgramTheWireProtocolAndTheBuildTarget) {
  const auto r = RunWorker({"--version"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, ContainsRegex("^mtworker [0-9]+\\.[0-9]+\\.[0-9]+ "));
  EXPECT_THAT(r.output, HasSubstr("(wire protocol " + std::to_string(wire::kProtocolVersion) +
                                  "; " + kBuildArch + ", " + kBuildSimd + ")"));
}

TEST(WorkerCliE2e, ATypoGetsTheNearestFlag) {
  auto r = RunWorker({"--hubb", "127.0.0.1:1"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("unknown option --hubb; did you mean --hub?"));
  r = RunWorker(Concat(kHubMode, {"--treads", "2"}));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("unknown option --treads; did you mean --threads?"));
}

TEST(WorkerCliE2e, HelpShowsEveryFlagWithItsDefaultAndRange) {
  const auto r = RunWorker({"--help"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(test_support::LinesWiderThan(r.output, 80), "");
  for (const char* line : {"--hub HOST[:PORT]",
                           "--threads N",
                           "[1 to 256; default 1]",
                           "--device auto|cpu|opencl",
                           "[default cpu]",
                           "--connect-timeout X",
                           "[1 to 1e+07; default 600]",
                           "--memory-budget SIZE",
                           "or an image folder (DIR/<class>/*.png|jpg)",
                           "[default auto]",
                           "--lr X",
                           "default: adam 0.004 x sqrt(batch / 64)",
                           "--optimizer adam|sgd",
                           "[default adam]",
                           "[1e-09 to 100]",
                           "--log-level trace|debug|info|warn|error|off",
                           "[default info]",
                           "--token-file FILE",
                           "MT_TOKEN",
                           "--version",
                           "Exit codes: 0 done"})
    EXPECT_THAT(test_support::OneLine(r.output), HasSubstr(line));
  for (const auto& flags : {kStandaloneOnly, kHubOnly})
    for (const auto& flag : flags) EXPECT_THAT(r.output, HasSubstr("\n  " + flag[0])) << flag[0];
}

TEST(WorkerCliE2e, LogLevelSetsWhatIsLogged) {
  const fs::path dir = test_support::FreshTempDir("worker-cli-log");
  test_support::WriteIdxDataset(dir.string(), 256, 64, 5);
  const std::vector<std::string> run = {"--standalone", "--dataset", dir.string(), "--steps", "2"};
  const auto info = RunWorker(run);
  ASSERT_EQ(info.exit_code, 0) << info.output;
  EXPECT_THAT(info.output, HasSubstr("[info]"));
  const auto warn = RunWorker(Concat(run, {"--log-level", "warn"}));
  ASSERT_EQ(warn.exit_code, 0) << warn.output;
  EXPECT_THAT(warn.output, Not(HasSubstr("[info]")));
  const auto debug = RunWorker(Concat(run, {"--log-level", "debug"}));
  ASSERT_EQ(debug.exit_code, 0) << debug.output;
  EXPECT_THAT(debug.output, HasSubstr("[info]"));
  fs::remove_all(dir);
}

TEST(WorkerCliE2e, MoreThreadsThanTheMachineHasWarnsButRuns) {
  const unsigned cores = std::thread::hardware_concurrency();
  if (cores == 0 || cores >= 256) GTEST_SKIP() << "hardware_concurrency() is " << cores;
  const fs::path dir = test_support::FreshTempDir("worker-cli-threads");
  test_support::WriteIdxDataset(dir.string(), 256, 64, 5);
  // Enough steps to leave chance, which a standalone run would report as a failure (exit 1).
  const auto r = RunWorker({"--standalone", "--dataset", dir.string(), "--steps", "10", "--threads",
                            std::to_string(cores + 1)});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output,
              HasSubstr("--threads " + std::to_string(cores + 1) + " is more than this machine's " +
                        std::to_string(cores) + " hardware threads"));
  const auto fits =
      RunWorker({"--standalone", "--dataset", dir.string(), "--steps", "10", "--threads", "1"});
  EXPECT_EQ(fits.exit_code, 0) << fits.output;
  EXPECT_THAT(fits.output, Not(HasSubstr("hardware threads")));
  fs::remove_all(dir);
}

// The hub names a dataset directory the worker was not told to allow: the
// worker tells the hub it leaves and exits 1 without opening it; allowed
// with --allow-data, the same worker trains.
TEST(WorkerCliE2e, ADatasetTheHubNamesMustBeAllowed) {
  const fs::path dir = test_support::FreshTempDir("worker-allow-data");
  test_support::WriteIdxDataset(dir.string(), 256, 64, 4);
  std::unique_ptr<test_support::ChildProcess> hub;
  const int port = test_support::StartHub(
      hub, dir, {"--workers", "1", "--dataset", dir.string(), "--steps", "3"});
  ASSERT_GT(port, 0);
  const std::string address = "127.0.0.1:" + std::to_string(port);
  // The tests' own MT_ALLOW_DATA (tests/support/test_environment.cc) replaced.
  const auto refused =
      test_support::RunProcess({"/usr/bin/env", "MT_ALLOW_DATA=/nonexistent", Worker(), "--hub",
                                address, "--name", "wary", "--connect-timeout", "30"},
                               60);
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_THAT(refused.output, HasSubstr(dir.string()));
  const fs::path events = test_support::EventsOf(dir, "hub");
  EXPECT_TRUE(test_support::WaitForEvent(events, "worker_left", {{"name", "wary"}}, 10))
      << hub->Log();
  const auto allowed = test_support::RunProcess(
      {"/usr/bin/env", "MT_ALLOW_DATA=/nonexistent", Worker(), "--hub", address, "--name",
       "trusting", "--allow-data", "/elsewhere", "--allow-data", dir.string()},
      120);
  EXPECT_EQ(allowed.exit_code, 0) << allowed.output;
  EXPECT_EQ(hub->Wait(60), 0) << hub->Log();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mt
