// The coordinator's transport-facing side: joining, streams opening and
// closing, gradient chunks arriving, leaving, stopping.
#include <spdlog/spdlog.h>

#include "core/compress/compression_proto.h"
#include "core/optim/optimizer_proto.h"
#include "hub/hub_trace.h"
#include "hub/step_coordinator.h"
#include "proto/wire.h"

namespace mt {

using Code = HubStatus::Code;

const char* EventName(HubEvent::Kind kind) {
  switch (kind) {
    case HubEvent::Kind::kWorkerJoined: return "worker_joined";
    case HubEvent::Kind::kWorkerReady: return "worker_ready";
    case HubEvent::Kind::kStepPublished: return "step_published";
    case HubEvent::Kind::kStepDone: return "step_done";
    case HubEvent::Kind::kWorkerLeftOut: return "worker_left_out";
    case HubEvent::Kind::kWorkerQuarantined: return "worker_quarantined";
    case HubEvent::Kind::kWorkerBack: return "worker_back";
    case HubEvent::Kind::kWorkerResync: return "worker_resync";
    case HubEvent::Kind::kWorkerDropped: return "worker_dropped";
    case HubEvent::Kind::kWorkerLeft: return "worker_left";
    case HubEvent::Kind::kBatchesChanged: return "batches_changed";
    case HubEvent::Kind::kEvaluated: return "evaluated";
    case HubEvent::Kind::kEpochEvaluated: return "epoch_evaluated";
    case HubEvent::Kind::kTargetReached: return "target_reached";
    case HubEvent::Kind::kCheckpointSaved: return "checkpoint_saved";
    case HubEvent::Kind::kProgress: return "progress";
    case HubEvent::Kind::kSyncPeriodChanged: return "sync_period_changed";
    case HubEvent::Kind::kRunEnded: return "run_ended";
  }
  return "?";
}

StepCoordinator::StepCoordinator(const HubConfig& config, const proto::ModelSpec& spec,
                                 const RunPlan& plan, MasterModel& master, MessageEncoder& encoder,
                                 RunMetrics& metrics, HubEventSink* events)
    : config_(config),
      spec_(spec),
      plan_(plan),
      master_(master),
      encoder_(encoder),
      metrics_(metrics),
      events_(events),
      membership_(AdmissionRules{config.token, plan.batch(), master.worker_fixed_bytes(),
                                 master.worker_bytes_per_sample(), master.param_count(),
                                 master.segments(), master.compression(),
                                 config.max_workers_or_default()}),
      controller_(config.worker_batches.empty() ? config.batch_policy : BatchPolicy::kFixed),
      sync_(config.sync_every, config.overlap_rounds),
      aggregator_(AggregatorOptions{config.aggregate, config.clip_factor}) {}

void StepCoordinator::Emit(HubEvent::Kind kind, int worker, std::string detail) {
  if (!events_) return;
  const WorkerSlot* slot = membership_.Find(worker);
  events_->OnEvent(
      HubEvent{kind, step_, worker, std::move(detail), slot ? slot->name : std::string()});
}

HubStatus StepCoordinator::Join(const proto::JoinRequest& req, const std::string& peer,
                                proto::JoinReply* reply) {
  std::lock_guard<std::mutex> lock(mu_);
  for (WorkerSlot* gone : membership_.ExpireJoins(Clock::now())) {
    spdlog::warn("worker {} ({}) joined but opened no stream within {} s: its slot is freed",
                 gone->id, gone->name, Membership::kJoinExpiry.count());
    Emit(HubEvent::Kind::kWorkerDropped, gone->id, "joined but opened no stream");
  }
  WorkerSlot* slot = nullptr;
  if (HubStatus s = membership_.Admit(req, peer, &slot); !s.ok()) return s;
  Emit(HubEvent::Kind::kWorkerJoined, slot->id, slot->name);
  reply->set_worker_id(slot->id);
  *reply->mutable_model() = spec_;
  *reply->mutable_optimizer() = ToProto(master_.optimizer().config());
  reply->set_dataset(config_.dataset);
  reply->set_seed(config_.seed);
  reply->set_global_batch(static_cast<int32_t>(plan_.batch()));
  reply->set_digest_every(config_.digest_every);
  reply->set_param_count(master_.param_count());
  reply->set_max_batch(slot->max_batch);
  reply->set_compression(ToProto(master_.compression()));
  for (const wire::Segment& seg : master_.segments()) reply->add_segments(seg.begin);
  reply->set_overlap_rounds(config_.rounds_overlap());
  reply->set_session_secret(slot->session_secret);
  for (const std::string& name : master_.frozen()) reply->add_frozen_layers(name);
  reply->mutable_running_stats()->Add(running_stats_.begin(), running_stats_.end());
  if (trace_) {
    reply->set_trace(true);
    trace_->OnJoin(slot->id, slot->name);
  }
  return HubStatus::Ok();
}

HubStatus StepCoordinator::Hello(const proto::Hello& hello, WorkerLink* link, int* worker_id) {
  std::lock_guard<std::mutex> lock(mu_);
  WorkerSlot* slot = nullptr;
  if (HubStatus s = membership_.Attach(hello, link, &slot); !s.ok()) return s;
  *worker_id = slot->id;
  Emit(HubEvent::Kind::kWorkerReady, slot->id, slot->name);
  cv_.notify_all();
  return HubStatus::Ok();
}

HubStatus StepCoordinator::Gradient(int worker_id, const proto::GradientChunk& chunk) {
  const int64_t arrived_us = trace_ ? trace::NowMicros() : 0;
  std::lock_guard<std::mutex> lock(mu_);
  WorkerSlot* slot = membership_.Find(worker_id);
  if (!slot)
    return HubStatus::Error(Code::kNotFound, "unknown worker id " + std::to_string(worker_id));
  if (slot->state == WorkerSlot::State::kLate) {
    // The step it was late for went on without it; its gradient is stale.
    // Once the whole of it is in, the worker is evidently back: it takes
    // part again from the next step, with the current weights.
    // Left out again and again, it sits out a while first (hub/quarantine.h).
    if (chunk.last() && !slot->back_ready) {
      slot->back_ready = true;
      const double wait =
          std::chrono::duration<double>(slot->quarantined_until - Clock::now()).count();
      if (wait > 0) {
        spdlog::warn(
            "worker {} ({}) has missed {} deadlines lately: it sits out {:.0f} s before it "
            "takes part again",
            slot->id, slot->name, slot->strikes, wait);
        Emit(HubEvent::Kind::kWorkerQuarantined, slot->id);
      }
      ReleaseQuarantined();
      cv_.notify_all();
    }
    return HubStatus::Ok();
  }
  // A worker that has said Leave may still have chunks in flight: they
  // count for nothing, and are no fault of its.
  if (slot->state == WorkerSlot::State::kGone) return HubStatus::Ok();
  const auto chunk_bytes =
      static_cast<int64_t>(chunk.values_size() * sizeof(float) + chunk.packed().size());
  metrics_.gradient_bytes_in += chunk_bytes;
  slot->stats.bytes_in += chunk_bytes;
  if (slot->state != WorkerSlot::State::kActive)
    return HubStatus::Error(Code::kInvalidArgument,
                            "gradient from a worker that is not in the step loop");
  if (trace_)
    if (std::string why = HubTrace::Check(chunk); !why.empty())
      return HubStatus::Error(Code::kInvalidArgument, std::move(why));
  const bool first_chunk = slot->inbox.segments_received() == 0;
  if (std::string why = slot->inbox.Accept(chunk); !why.empty()) {
    if (slot->inbox.refused_non_finite()) NoteNonFinite(why);
    return HubStatus::Error(Code::kInvalidArgument, std::move(why));
  }
  if (trace_) trace_->OnChunk(worker_id, chunk, first_chunk, arrived_us);
  if (slot->inbox.complete()) {
    slot->complete_at = Clock::now();
    slot->device_status = chunk.device();
    cv_.notify_all();
  }
  ReduceReadySegments();
  if (slot->inbox.complete()) AdvanceIfComplete();
  return HubStatus::Ok();
}

void StepCoordinator::NoteNonFinite(const std::string& why) {
  // One worker's non-finite result is refused and the run goes on without
  // it; when every worker that tries the step fails the same way, the
  // weights they all start from are what is broken, and waiting for more
  // workers would wait forever.
  if (++non_finite_refusals_ < kDivergedAfter || !diverged_.empty()) return;
  diverged_ = "the model diverged at step " + std::to_string(step_ + 1) + ": " +
              std::to_string(non_finite_refusals_) +
              " results in a row were not finite, none was (last: " + why +
              "); lower --lr, or --resume from an earlier checkpoint";
  spdlog::error("{}", diverged_);
  stop_ = true;
  cv_.notify_all();
}

std::string StepCoordinator::diverged() const {
  std::lock_guard<std::mutex> lock(mu_);
  return diverged_;
}

void StepCoordinator::StreamClosed(int worker_id, const HubStatus& why) {
  std::lock_guard<std::mutex> lock(mu_);
  WorkerSlot* slot = membership_.Find(worker_id);
  if (!slot) return;
  const bool was_in = membership_.Remove(slot);
  controller_.Forget(worker_id);
  ReduceReadySegments();  // the others' segments no longer wait for this one's
  cv_.notify_all();
  if (!why.ok()) {
    spdlog::warn("worker {} ({}) refused and dropped: {}", slot->id, slot->name, why.message);
    Emit(HubEvent::Kind::kWorkerDropped, slot->id, why.message);
  } else if (was_in && !finished_) {
    spdlog::warn("worker {} ({}) left: stream closed", slot->id, slot->name);
    Emit(HubEvent::Kind::kWorkerDropped, slot->id, "stream closed");
  }
}

HubStatus StepCoordinator::Leave(const proto::LeaveRequest& req) {
  std::lock_guard<std::mutex> lock(mu_);
  WorkerSlot* slot = nullptr;
  if (HubStatus s = membership_.FindLeaving(req, &slot); !s.ok()) return s;
  slot->left_because = req.reason();
  if (slot->state != WorkerSlot::State::kGone) {
    spdlog::info("worker {} ({}) leaves: {}", slot->id, slot->name,
                 req.reason().empty() ? "no reason given" : req.reason());
    Emit(HubEvent::Kind::kWorkerLeft, slot->id, req.reason());
  }
  // The link stays until the stream closes: the worker cancels it itself.
  slot->state = WorkerSlot::State::kGone;
  slot->inbox.Release();
  controller_.Forget(slot->id);
  ReduceReadySegments();
  cv_.notify_all();
  return HubStatus::Ok();
}

void StepCoordinator::RequestStop() {
  std::lock_guard<std::mutex> lock(mu_);
  stop_ = true;
  cv_.notify_all();
}

bool StepCoordinator::stop_requested() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stop_;
}

int64_t StepCoordinator::steps_done() const {
  std::lock_guard<std::mutex> lock(mu_);
  return step_;
}

std::vector<float> StepCoordinator::MasterWeights() const {
  std::lock_guard<std::mutex> lock(mu_);
  return master_.Weights();
}

void StepCoordinator::Finish(const std::string& reason, double test_accuracy) {
  proto::HubMessage m;
  m.mutable_stop()->set_reason(reason);
  std::vector<WorkerSlot*> who;
  {
    std::lock_guard<std::mutex> lock(mu_);
    finished_ = true;
    membership_.Close();
    m.mutable_stop()->set_steps(step_);
    who = membership_.NotGone();
    Emit(HubEvent::Kind::kRunEnded, -1, reason);
  }
  m.mutable_stop()->set_test_accuracy(test_accuracy);
  const Encoded stop = encoder_.Encode(m);
  for (auto* s : who) s->Send(stop);
}

}  // namespace mt
