// What the parts of a round share: the run's settings and plan, the master
// copy, the exchange policy, the messages, the metrics, the batch split,
// the roster, the round's state and its participants. All are owned by
// the StepCoordinator, which calls each part under its one lock; the parts
// (round_planner.h, round_tally.h, round_reduction.h, secure_round.h) hold
// this bundle instead of a dozen references each.
#pragma once

#include <vector>

#include "core/trace/span.h"
#include "core/train/run_plan.h"
#include "hub/aggregation/master_model.h"
#include "hub/coordinator/step_messages.h"
#include "hub/coordinator/worker_roster.h"
#include "hub/hub_config.h"
#include "hub/policy/batch_controller.h"
#include "hub/policy/exchange_policy.h"
#include "hub/report/run_metrics.h"
#include "hub/round/round_state.h"

namespace mt {

struct RoundContext {
  const HubConfig& config;
  RunPlan& plan;  // written under the lock (SetGlobalBatch), on the run thread
  MasterModel& master;
  ExchangePolicy& exchange;  // --sync-every and --compress: the one owner of both
  StepMessages& messages;
  RunMetrics& metrics;
  BatchController& controller;
  WorkerRoster& roster;
  RoundState& state;
  std::vector<WorkerSlot*>& round;   // the participants of the step in progress
  trace::SpanSink* spans = nullptr;  // mthub --trace: the hub's spans; null when not tracing

  // Whether every participant not gone has delivered its whole update;
  // `*any`: at least one has.
  bool AllDelivered(bool* any = nullptr) const {
    bool all = true, some = false;
    for (const WorkerSlot* s : round) {
      if (s->state == WorkerSlot::State::kGone) continue;
      all = all && s->inbox.complete();
      some = some || s->inbox.complete();
    }
    if (any) *any = some;
    return all;
  }
};

}  // namespace mt
