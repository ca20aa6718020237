// The training loop (core/train/training_loop.h) with a fake exchange and
// fake hooks, no processes: when it evaluates, checkpoints and stops, and
// what its summary says, for an exchange that runs the step itself
// (standalone) and one whose step is in flight while the loop works (hub).
#include "core/train/training_loop.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace mt {
namespace {

class FakeExchange final : public StepExchange {
 public:
  bool in_flight = false;    // the hub's kind: evaluations overlap the step
  int64_t round = 1;         // steps per Complete (local SGD rounds)
  int64_t stop_before = -1;  // Begin refuses at this step (a signal)
  int64_t empty_at = -1;     // this step's first try finishes nobody
  std::string failure;       // Failure() once the steps are over
  std::vector<std::string> calls;
  int overlapped = 0;

  ExchangeKind kind() const override {
    return in_flight ? ExchangeKind::kEveryStep : ExchangeKind::kNone;
  }
  bool Begin() override {
    if (steps_ == stop_before) return false;
    calls.push_back("begin " + std::to_string(steps_));
    return true;
  }
  int64_t steps_done() const override { return steps_; }
  bool WeightsCurrent() const override { return true; }
  bool StepInFlight() const override { return in_flight; }
  void Overlapped(std::chrono::steady_clock::duration) override { ++overlapped; }
  StepOutcome Complete(bool more_may_follow) override {
    calls.push_back(std::string("complete") + (more_may_follow ? "" : " last"));
    StepOutcome out;
    if (steps_ == empty_at) {
      empty_at = -1;
      return out;  // samples 0: runs again
    }
    steps_ += round;
    out.steps = round;
    out.samples = 10 * round;
    out.loss_sum = 2.0 * static_cast<double>(out.samples);
    return out;
  }
  std::string Failure() const override { return failure; }
  std::string StopReason() const override { return steps_ == stop_before ? "stopped" : ""; }

 private:
  int64_t steps_ = 0;
};

class FakeHooks final : public RunHooks {
 public:
  // Test accuracy and loss of the weights after `step` steps.
  std::function<double(int64_t)> accuracy = [](int64_t) { return 0.5; };
  std::function<double(int64_t)> loss = [](int64_t) { return 1.0; };
  std::vector<int64_t> evaluated, checkpoints, steps;
  std::chrono::milliseconds evaluation_takes{0};
  std::string problem;
  bool ended = false;

  // Evaluations between epoch ends in the background, as the hub's: a
  // result is in after `ready_after` collections, or when the loop waits.
  bool background = false;
  int ready_after = 2;
  std::vector<int64_t> started;
  int64_t running = -1;
  int polls = 0;
  bool StartEvaluation(int64_t step) override {
    if (!background) return false;
    started.push_back(step);
    running = step;
    polls = 0;
    return true;
  }
  std::optional<EvalResult> TakeEvaluation(bool wait) override {
    if (running < 0 || (!wait && ++polls < ready_after)) return std::nullopt;
    const int64_t step = running;
    running = -1;
    return ResultAt(step);
  }

  EvalResult Evaluate(int64_t step) override {
    evaluated.push_back(step);
    std::this_thread::sleep_for(evaluation_takes);
    return ResultAt(step);
  }
  EvalResult ResultAt(int64_t step) const {
    EvalResult r;
    r.accuracy = accuracy(step);
    r.mean_loss = loss(step);
    r.samples = 100;
    return r;
  }
  void SaveCheckpoint(int64_t step) override { checkpoints.push_back(step); }
  void OnStep(const StepOutcome&, const StepSample& s) override { steps.push_back(s.step); }
  std::string ResultProblem(double) override { return problem; }
  void OnRunEnded() override { ended = true; }
};

using Steps = std::vector<int64_t>;

// 100 samples in batches of 10: 10 steps an epoch.
RunSummary Train(FakeExchange& exchange, FakeHooks& hooks, LoopSettings settings,
                 int64_t epochs = 2, int64_t max_steps = 0) {
  const RunPlan plan(100, 10, epochs, max_steps);
  TrainingLoop loop(plan, settings, exchange, hooks);
  loop.Run();
  RunSummary s;
  loop.FillSummary(s);
  EXPECT_TRUE(hooks.ended);
  return s;
}

TEST(TrainingLoop, EvaluatesAtEpochEndsEveryNStepsAndTheEnd) {
  FakeExchange ex;
  FakeHooks hooks;
  hooks.accuracy = [](int64_t step) { return 0.01 * static_cast<double>(step); };
  LoopSettings settings;
  settings.eval_every = 4;
  const RunSummary s = Train(ex, hooks, settings, 3, 25);
  EXPECT_EQ(hooks.evaluated, (Steps{4, 8, 10, 12, 16, 20, 24, 25}));
  EXPECT_EQ(s.steps, 25);
  EXPECT_EQ(s.samples, 250);
  EXPECT_FALSE(s.stopped_early);
  EXPECT_EQ(s.stop_reason, "training complete");
  ASSERT_EQ(s.eval_history.size(), 8u);
  EXPECT_EQ(s.eval_history[2].step, 10);
  EXPECT_EQ(s.eval_history[2].samples, 100);
  EXPECT_DOUBLE_EQ(s.eval_history[2].test_accuracy, 0.10);
  // Two whole epochs, and the third that the run ended inside.
  ASSERT_EQ(s.epochs.size(), 3u);
  EXPECT_TRUE(s.epochs[1].complete);
  EXPECT_EQ(s.epochs[1].step, 20);
  EXPECT_EQ(s.epochs[1].samples, 100);
  EXPECT_DOUBLE_EQ(s.epochs[1].train_loss, 2.0);
  EXPECT_FALSE(s.epochs[2].complete);
  EXPECT_EQ(s.epochs[2].samples, 50);
  EXPECT_DOUBLE_EQ(s.test_accuracy, 0.25);
  EXPECT_DOUBLE_EQ(s.last_step_loss, 2.0);
  EXPECT_EQ(s.target_accuracy, -1);
  EXPECT_EQ(s.step_to_target, -1);
  ASSERT_TRUE(s.details.contains("history"));
  EXPECT_EQ(s.details["history"]["points"].back()["step"], 25);
}

TEST(TrainingLoop, InRoundsAnEvaluationWaitsForTheFirstRoundEndAfterItsStep) {
  FakeExchange ex;
  ex.round = 3;  // rounds of 3 end at 3, 6, 9, ...; the epoch has 10 steps
  FakeHooks hooks;
  LoopSettings settings;
  settings.eval_every = 4;
  Train(ex, hooks, settings, 1, 9);
  // 4 is passed at 6 and 8 at 9, the end; never twice for one multiple.
  EXPECT_EQ(hooks.evaluated, (Steps{6, 9}));
}

TEST(TrainingLoop, ChecksPointsAtTheirIntervalEpochEndsAndTheEndOnce) {
  FakeExchange ex;
  FakeHooks hooks;
  LoopSettings settings;
  settings.checkpoint_every = 4;
  Train(ex, hooks, settings, 2, 18);
  EXPECT_EQ(hooks.checkpoints, (Steps{4, 8, 10, 12, 16, 18}));
  FakeExchange whole;
  FakeHooks at_end;
  Train(whole, at_end, LoopSettings{}, 2);
  EXPECT_EQ(at_end.checkpoints, (Steps{10, 20}));  // the end is an epoch end: not twice
}

TEST(TrainingLoop, TheTimeToATargetIsWhenItsWeightsWereCurrentNotWhenMeasured) {
  // Five evaluations of 100 ms each (a standalone run waits for them), the
  // last reaching the target.
  FakeExchange ex;
  FakeHooks hooks;
  hooks.accuracy = [](int64_t step) { return step >= 12 ? 0.9 : 0.3; };
  hooks.evaluation_takes = std::chrono::milliseconds(100);
  LoopSettings settings;
  settings.eval_every = 3;
  settings.target_accuracy = 0.8;
  const auto began = std::chrono::steady_clock::now();
  const RunSummary s = Train(ex, hooks, settings, 5);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  ASSERT_EQ(s.step_to_target, 12);
  ASSERT_EQ(hooks.evaluated.size(), 5u);
  // Its own evaluation came after: at least 100 ms before the run's end.
  EXPECT_LE(s.seconds_to_target, took - 0.1);
  EXPECT_GE(s.seconds_to_target, 0.4) << "the four evaluations before it paused the run";
}

TEST(TrainingLoop, ATargetStopsAtTheFirstEvaluationReachingItWithoutAnotherStep) {
  FakeExchange ex;
  FakeHooks hooks;
  hooks.accuracy = [](int64_t step) { return step >= 12 ? 0.9 : 0.3; };
  LoopSettings settings;
  settings.eval_every = 3;
  settings.target_accuracy = 0.8;
  const RunSummary s = Train(ex, hooks, settings, 5);
  EXPECT_EQ(s.stop_reason, "target accuracy reached");
  EXPECT_TRUE(s.stopped_early);
  EXPECT_EQ(s.step_to_target, 12);
  EXPECT_EQ(s.steps, 12);
  EXPECT_DOUBLE_EQ(s.target_accuracy, 0.8);
  EXPECT_EQ(s.seconds_to_target, s.eval_history.back().seconds);
  EXPECT_EQ(hooks.evaluated, (Steps{3, 6, 9, 10, 12}));  // the last one not twice
  // The epoch the run ended in is closed by that evaluation.
  ASSERT_EQ(s.epochs.size(), 2u);
  EXPECT_FALSE(s.epochs[1].complete);
  EXPECT_DOUBLE_EQ(s.test_accuracy, 0.9);
}

TEST(TrainingLoop, BackgroundEvaluationsAreRecordedAsOfTheirWeightsWhileTheStepsGoOn) {
  FakeExchange ex;
  ex.in_flight = true;
  FakeHooks hooks;
  hooks.background = true;
  hooks.accuracy = [](int64_t step) { return 0.01 * static_cast<double>(step); };
  LoopSettings settings;
  settings.eval_every = 3;
  const RunSummary s = Train(ex, hooks, settings, 2);
  // Between epoch ends in the background; epoch ends and the end in place.
  EXPECT_EQ(hooks.started, (Steps{3, 6, 9, 12, 15, 18}));
  EXPECT_EQ(hooks.evaluated, (Steps{10, 20}));
  std::vector<int64_t> history;
  for (const EvalPoint& p : s.eval_history) history.push_back(p.step);
  EXPECT_EQ(history, (Steps{3, 6, 9, 10, 12, 15, 18, 20}));
  for (size_t i = 0; i < s.eval_history.size(); ++i) {
    const EvalPoint& p = s.eval_history[i];
    EXPECT_EQ(p.samples, 10 * p.step);  // as of the weights it evaluated
    EXPECT_DOUBLE_EQ(p.test_accuracy, 0.01 * static_cast<double>(p.step));
    if (i > 0) {
      EXPECT_GE(p.seconds, s.eval_history[i - 1].seconds);
    }
  }
  EXPECT_EQ(s.steps, 20);
}

TEST(TrainingLoop, ABackgroundEvaluationReachingTheTargetStopsTheRunOnceItsResultIsIn) {
  FakeExchange ex;
  ex.in_flight = true;
  FakeHooks hooks;
  hooks.background = true;
  hooks.ready_after = 3;  // the result comes three steps after its weights
  hooks.accuracy = [](int64_t step) { return step >= 6 ? 0.9 : 0.3; };
  LoopSettings settings;
  settings.eval_every = 3;
  settings.target_accuracy = 0.8;
  const RunSummary s = Train(ex, hooks, settings, 5);
  EXPECT_EQ(s.stop_reason, "target accuracy reached");
  EXPECT_EQ(s.step_to_target, 6);  // the weights it evaluated, not when it knew
  EXPECT_EQ(s.steps, 9);
  EXPECT_EQ(hooks.started, (Steps{3, 6}));
  ASSERT_GE(s.eval_history.size(), 2u);
  EXPECT_EQ(s.eval_history[1].step, 6);
  EXPECT_EQ(s.seconds_to_target, s.eval_history[1].seconds);
  EXPECT_EQ(hooks.evaluated, (Steps{9}));  // the final weights, in place
}

TEST(TrainingLoop, AStepInFlightOverlapsTheEvaluationAndStillCompletes) {
  FakeExchange ex;
  ex.in_flight = true;
  FakeHooks hooks;
  hooks.accuracy = [](int64_t step) { return step >= 6 ? 0.9 : 0.3; };
  LoopSettings settings;
  settings.eval_every = 3;
  settings.target_accuracy = 0.8;
  const RunSummary s = Train(ex, hooks, settings, 5);
  EXPECT_EQ(s.step_to_target, 6);
  EXPECT_EQ(s.steps, 7);  // the step published before that evaluation
  EXPECT_EQ(ex.overlapped, 2);
  EXPECT_EQ(ex.calls.back(), "complete last");
  EXPECT_EQ(hooks.evaluated, (Steps{3, 6, 7}));
}

TEST(TrainingLoop, PatienceStopsWhenTheTestLossStopsImproving) {
  FakeExchange ex;
  FakeHooks hooks;
  // Best after epoch 2, then worse: patience 2 stops after epoch 4.
  hooks.loss = [](int64_t step) { return step == 20 ? 0.5 : 1.0; };
  LoopSettings settings;
  settings.patience = 2;
  const RunSummary s = Train(ex, hooks, settings, 10);
  EXPECT_EQ(s.steps, 40);
  EXPECT_EQ(s.epochs.size(), 4u);
  EXPECT_TRUE(s.stopped_early);
  EXPECT_EQ(s.stop_reason, "early stop: test loss has not improved for 2 epoch(s)");
}

TEST(TrainingLoop, AStopEndsTheRunWithTheExchangesReasonAndSavesIt) {
  FakeExchange ex;
  ex.stop_before = 7;
  FakeHooks hooks;
  const RunSummary s = Train(ex, hooks, LoopSettings{});
  EXPECT_EQ(s.steps, 7);
  EXPECT_TRUE(s.stopped_early);
  EXPECT_EQ(s.stop_reason, "stopped");
  EXPECT_EQ(hooks.evaluated, (Steps{7}));
  EXPECT_EQ(hooks.checkpoints, (Steps{7}));
}

TEST(TrainingLoop, AFailedRunIsNeitherEvaluatedNorCheckpointedAtTheEnd) {
  FakeExchange ex;
  ex.failure = "diverged";
  FakeHooks hooks;
  TrainingLoop loop(RunPlan(100, 10, 0, 5), LoopSettings{}, ex, hooks);
  loop.Run();
  EXPECT_TRUE(loop.failed());
  EXPECT_EQ(loop.stop_reason(), "diverged");
  EXPECT_TRUE(hooks.evaluated.empty());
  EXPECT_TRUE(hooks.checkpoints.empty());

  FakeExchange fine;
  FakeHooks broken;
  broken.problem = "weights blew up";
  TrainingLoop second(RunPlan(100, 10, 0, 5), LoopSettings{}, fine, broken);
  second.Run();
  EXPECT_TRUE(second.failed());
  EXPECT_EQ(second.stop_reason(), "weights blew up");
  EXPECT_EQ(broken.evaluated, (Steps{5}));
  EXPECT_TRUE(broken.checkpoints.empty());
}

TEST(TrainingLoop, AStepThatFinishedNobodyRunsAgainAndRoundsCoverSeveralSteps) {
  FakeExchange ex;
  ex.empty_at = 3;
  FakeHooks hooks;
  const RunSummary s = Train(ex, hooks, LoopSettings{}, 1);
  EXPECT_EQ(hooks.steps, (Steps{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(s.samples, 100);

  FakeExchange rounds;
  rounds.round = 5;
  FakeHooks by_round;
  const RunSummary r = Train(rounds, by_round, LoopSettings{}, 2);
  EXPECT_EQ(by_round.steps, (Steps{5, 10, 15, 20}));
  EXPECT_EQ(by_round.evaluated, (Steps{10, 20}));
  EXPECT_EQ(r.details["history"]["points"][0]["steps"], 5);
}

TEST(TrainingLoop, AResumedRunDoesNotEvaluateTheWeightsItStartsFrom) {
  FakeExchange ex;
  FakeHooks hooks;
  // Resumed at an epoch end: 10 steps already done.
  ex.round = 10;
  ex.Complete(true);
  ex.round = 1;
  ex.calls.clear();
  const RunSummary s = Train(ex, hooks, LoopSettings{}, 2);
  EXPECT_EQ(hooks.evaluated, (Steps{20}));
  EXPECT_EQ(s.samples, 100);  // trained in this process
  EXPECT_EQ(s.steps, 20);
}

}  // namespace
}  // namespace mt
