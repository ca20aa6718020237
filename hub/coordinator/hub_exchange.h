// The hub's steps for the training loop (core/train/training_loop.h): a
// thin adapter over the StepCoordinator, which does the exchange itself
// (every step, rounds of --sync-every, --overlap look-ahead). A published
// step is in flight while the workers compute it, so the loop's
// evaluation overlaps their compute, as hub/coordinator/step_coordinator.h describes.
#pragma once

#include <string>

#include "core/train/step_exchange.h"
#include "hub/coordinator/step_coordinator.h"
#include "hub/hub_config.h"

namespace mt {

class HubExchange final : public StepExchange {
 public:
  HubExchange(StepCoordinator& coordinator, const HubConfig& config)
      : coordinator_(coordinator),
        kind_(config.local_sgd.sync_every == 1    ? ExchangeKind::kEveryStep
              : config.local_sgd.rounds_overlap() ? ExchangeKind::kRoundsLookAhead
                                                  : ExchangeKind::kRounds) {}

  ExchangeKind kind() const override { return kind_; }
  bool Begin() override { return coordinator_.PublishStep(); }
  int64_t steps_done() const override { return coordinator_.steps_done(); }
  bool WeightsCurrent() const override { return coordinator_.published_result(); }
  bool StepInFlight() const override { return true; }
  void Overlapped(std::chrono::steady_clock::duration d) override {
    coordinator_.ExtendDeadline(d);
  }
  StepOutcome Complete(bool more_may_follow) override {
    last_ = coordinator_.CompleteStep(more_may_follow);
    return last_;  // the loop's part of it
  }
  std::string Failure() const override { return coordinator_.diverged(); }
  std::string StopReason() const override {
    return coordinator_.stop_requested() ? "hub shutting down" : "";
  }

  // The coordinator's account of the last completed step, for the live views.
  const StepCoordinator::StepOutcome& last() const { return last_; }

 private:
  StepCoordinator& coordinator_;
  ExchangeKind kind_;
  StepCoordinator::StepOutcome last_;
};

}  // namespace mt
