// The round's plan: its length, its members and their batches.
#include "hub/coordinator/round_planner.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>

#include "hub/coordinator/round_tally.h"

namespace mt {

int64_t RoundPlanner::Length() const {
  const int64_t step = r_.state.step;
  const int64_t epoch = r_.plan.EpochOf(step);
  int64_t h = 0;
  while (h < r_.exchange.sync.steps() && step + h < r_.plan.total_steps() &&
         r_.plan.EpochOf(step + h) == epoch && r_.plan.BatchAt(step + h) == r_.plan.batch()) {
    ++h;
    const int64_t done = step + h;
    // A checkpoint is of an exact step; evaluations wait for the round's
    // end (TrainingLoop::EvaluationDue), so they do not cut it.
    if (!r_.config.checkpoint_dir.empty() &&
        r_.plan.CheckpointDue(done, r_.config.checkpoint_every))
      break;
  }
  return std::max<int64_t>(h, 1);  // a short last step is a round of its own
}

std::vector<WorkerSlot*> RoundPlanner::Attend(std::vector<WorkerSlot*> present,
                                              bool secure_aggregation) {
  // With --partition each worker's share would go untrained while it sits
  // out; fixed shares are the user's own choice.
  if (r_.controller.policy() != BatchPolicy::kBalanced ||
      r_.config.data.partition.kind != PartitionSpec::Kind::kIid || secure_aggregation)
    return present;
  std::vector<BatchController::Member> members;
  for (const WorkerSlot* s : present) members.push_back({s->id, s->max_batch, 1.0});
  const int total = r_.plan.BatchAt(r_.state.step);
  const int steps = static_cast<int>(Length());
  const int min_batch = r_.exchange.sync.local() ? BatchController::kMinLocalBatch : 1;
  Attendance::Changes changes;
  const std::vector<BatchController::Member> taking = attendance_.Choose(
      members, r_.config.min_workers,
      [&](const std::vector<BatchController::Member>& m) {
        return r_.controller.PredictStepMs(total, m, steps, min_batch);
      },
      &changes);
  Membership& members_now = r_.roster.membership();
  for (int id : changes.set_aside) r_.roster.SetAside(members_now.Find(id));
  for (int id : changes.brought_back) r_.roster.BringBack(members_now.Find(id));
  for (int id : changes.remeasure) r_.controller.Forget(id);
  std::vector<WorkerSlot*> who;
  for (const BatchController::Member& m : taking) who.push_back(members_now.Find(m.worker));
  return who;
}

void RoundPlanner::Begin(const std::vector<WorkerSlot*>& who) {
  RoundState& state = r_.state;
  r_.exchange.compression.AtStep(state.step);
  const int before = r_.exchange.sync.steps();
  if (r_.exchange.sync.SetSoleParticipant(who.size() == 1))
    RoundTally::RecordSyncChange(r_, before);
  state.steps = Length();
  state.local = r_.exchange.sync.local();
  Assign(who);
  // Decided under the lock, so a stream that breaks meanwhile cannot be
  // brought back to life by the broadcast.
  for (auto* s : who) {
    s->full_state.this_step =
        s->state == WorkerSlot::State::kWaiting || s->full_state.next_step || !state.have_result;
    if (s->full_state.next_step) ++s->stats.resyncs;
    s->full_state.next_step = false;
    s->state = WorkerSlot::State::kActive;
  }
  r_.round = who;
}

void RoundPlanner::Assign(const std::vector<WorkerSlot*>& who) {
  const RoundState& state = r_.state;
  const int64_t step = state.step;
  const int64_t epoch = r_.plan.EpochOf(step);
  const int64_t position = r_.plan.FirstSample(step);
  const int total = r_.plan.BatchAt(step);
  const int steps = static_cast<int>(state.steps);
  const std::vector<int>& shares = r_.config.worker_batches;
  std::vector<BatchController::Member> members;
  for (auto* s : who) {
    const double share = shares.empty() ? 1.0 : shares[static_cast<size_t>(s->id) % shares.size()];
    members.push_back({s->id, s->max_batch, share});
  }
  const int min_batch = state.local ? BatchController::kMinLocalBatch : 1;
  std::vector<int> batches = r_.controller.Next(total, members, steps, min_batch);
  const std::vector<RoundShare> plan = Shares(who, batches, steps, min_batch);
  // Workers that take the whole round take their step k's samples side by
  // side at position + k * stride, as one device would take them; a short
  // round's samples follow theirs in one block.
  int stride = 0;
  for (const RoundShare& share : plan) stride += share.steps == steps ? share.batch : 0;
  int64_t whole_offset = position, short_offset = position + int64_t{steps} * stride;
  bool changed = false;
  for (size_t i = 0; i < who.size(); ++i) {
    const RoundShare& share = plan[i];
    const bool whole = share.steps == steps;
    Assignment& a = who[i]->assignment;
    a.step = step;
    a.epoch = epoch;
    a.offset = whole ? whole_offset : short_offset;
    a.batch = share.batch;
    a.worker_id = who[i]->id;
    // With local SGD every round sends changes, a round of one step too:
    // the workers' optimizer states are their own, so the hub cannot take
    // an optimizer step for them.
    a.local_steps = state.local ? share.steps : 0;
    a.stride = state.local ? (whole ? stride : share.batch) : 0;
    if (whole)
      whole_offset += share.batch;
    else
      short_offset += int64_t{share.batch} * share.steps;
    who[i]->inbox.Expect(step, share.batch * share.steps);
    batches[i] = share.batch;
    changed = changed || share.batch != who[i]->last_batch;
  }
  // The epoch's last step is shorter; its split says nothing about speeds.
  if (changed && total == r_.plan.batch()) RecordBatchChange(who, batches);
}

std::vector<RoundShare> RoundPlanner::Shares(const std::vector<WorkerSlot*>& who,
                                             const std::vector<int>& batches, int steps,
                                             int min_batch) const {
  const HubConfig& c = r_.config;
  ShortRoundInputs in;
  in.batches = batches;
  in.steps = steps;
  in.min_batch = min_batch;
  // Unequal rounds are averaged per step (hub/aggregation/fednova.h): not
  // where the update's arithmetic is fixed by something else (secure
  // aggregation's masks, DP's sensitivity, drift correction's variates,
  // overlapped rounds' corrections).
  const bool may_shorten = r_.state.local && r_.controller.policy() == BatchPolicy::kBalanced &&
                           !c.secure_aggregation && !c.dp.enabled() &&
                           !c.local_sgd.rounds_overlap() && !c.local_sgd.drift_correction;
  if (!may_shorten) {
    std::vector<RoundShare> whole;
    for (int b : batches) whole.push_back({b, steps});
    return whole;
  }
  for (const WorkerSlot* s : who) {
    in.caps.push_back(s->max_batch);
    in.ms_per_sample.push_back(r_.controller.ms_per_sample(s->id));
    in.overhead_ms.push_back(r_.controller.overhead_ms(s->id));
  }
  return ShortenSlowRounds(in);
}

void RoundPlanner::Publish(const std::vector<WorkerSlot*>& who, bool with_result,
                           size_t last_segment) {
  const RoundState& state = r_.state;
  const trace::ScopedSpan span(r_.spans, trace::SpanKind::kBroadcast, -1, state.step);
  StepMessages& messages = r_.messages;
  messages.SetPlan(state.step, r_.spans ? trace::NowMicros() : 0, who);
  Encoded last_chunk, plan_alone;
  int64_t result_payload = 0;
  if (with_result)
    last_chunk = messages.Result(last_segment, state.average_step,
                                 state.average_local ? state.average_steps : 0, /*last=*/true,
                                 state.mean_loss, &result_payload);
  for (auto* s : who) {
    if (s->full_state.this_step) {
      messages.State(state.step, [s](const Encoded& m) { return s->Send(m); });
      if (!plan_alone) plan_alone = messages.Plan();
      s->Send(plan_alone);
    } else if (last_chunk) {
      s->Send(last_chunk);
      r_.metrics.result_bytes_out += result_payload;
      s->stats.bytes_out += result_payload;
    }
  }
}

void RoundPlanner::RecordBatchChange(const std::vector<WorkerSlot*>& who,
                                     const std::vector<int>& batches) {
  BatchChange change{r_.state.step, {}};
  std::string text;
  for (size_t i = 0; i < who.size(); ++i) {
    WorkerSlot* s = who[i];
    const double t = r_.controller.ms_per_sample(s->id);
    char buf[160];
    std::snprintf(buf, sizeof buf, " %s %d->%d", s->name.c_str(), s->last_batch, batches[i]);
    text += buf;
    if (t > 0) text += " (" + std::to_string(static_cast<int>(t * 1000)) + " us/sample)";
    s->last_batch = batches[i];
    change.batches.emplace_back(s->name, batches[i]);
  }
  RunMetrics& metrics = r_.metrics;
  if (metrics.batch_changes.size() < RunMetrics::kMaxBatchChanges)
    metrics.batch_changes.push_back(std::move(change));
  ++metrics.batch_change_count;
  r_.roster.Emit(HubEvent::Kind::kBatchesChanged, -1, text);
  // The progress line counts the changes; each one in full only when asked.
  spdlog::debug("step {}: batches{}", r_.state.step + 1, text);
}

}  // namespace mt
