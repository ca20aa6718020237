// The hub's gRPC-facing calls: who joins, the Train stream that carries a
// worker's gradients in, and leaving. The step loop is in hub.cc.
#include <spdlog/spdlog.h>

#include "hub/hub.h"
#include "proto/wire.h"

namespace mt {
namespace {

const char* StateName(WorkerSlot::State s) {
  switch (s) {
    case WorkerSlot::State::kJoined: return "joined";
    case WorkerSlot::State::kWaiting: return "waiting";
    case WorkerSlot::State::kActive: return "active";
    case WorkerSlot::State::kLate: return "late";
    case WorkerSlot::State::kGone: return "gone";
  }
  return "?";
}

}  // namespace

grpc::Status Hub::Join(const proto::JoinRequest& req, proto::JoinReply* reply, const std::string& peer) {
  if (req.protocol_version() != wire::kProtocolVersion)
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "protocol version " + std::to_string(req.protocol_version()) + " is not supported (hub speaks " +
                            std::to_string(wire::kProtocolVersion) + "); upgrade the older side");
  if (!config_.token.empty() && req.token() != config_.token)
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "wrong or missing token");
  std::lock_guard<std::mutex> lock(mu_);
  // OUT_OF_RANGE, not UNAVAILABLE: a worker should stop, not retry.
  if (finished_) return grpc::Status(grpc::StatusCode::OUT_OF_RANGE, "the run has ended");
  int max_batch = static_cast<int>(global_batch_);
  if (req.device().memory_budget_bytes() > 0) {
    const int64_t budget = req.device().memory_budget_bytes();
    const int64_t fits = (budget - static_cast<int64_t>(fixed_bytes_)) / static_cast<int64_t>(bytes_per_sample_);
    if (fits < 1)
      return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                          "memory budget of " + std::to_string(budget >> 10) + " KiB holds no batch: the model needs " +
                              std::to_string(fixed_bytes_ >> 10) + " KiB plus " + std::to_string(bytes_per_sample_ >> 10) +
                              " KiB per sample");
    max_batch = static_cast<int>(std::min<int64_t>(fits, global_batch_));
  }
  const int id = static_cast<int>(slots_.size());
  auto slot = std::make_unique<WorkerSlot>(id, model_->ParamCount(), compression_);
  slot->info = req.device();
  slot->name = req.device().name().empty() ? "worker" + std::to_string(id) : req.device().name();
  slot->device = req.device().backend().empty() ? "cpu" : req.device().backend();
  slot->peer = peer;
  slot->max_batch = max_batch;
  spdlog::info("worker {} joined: {} ({}, {} cores, {} threads{}) from {}", id, slot->name, slot->device,
               req.device().cores(), req.device().threads(),
               max_batch < global_batch_ ? ", batch at most " + std::to_string(max_batch) + " by its memory budget" : "",
               peer);
  slots_.push_back(std::move(slot));

  reply->set_worker_id(id);
  *reply->mutable_model() = spec_;
  auto* o = reply->mutable_optimizer();
  const OptimizerConfig& oc = optimizer_->config();
  o->set_kind(oc.kind);
  o->set_lr(oc.lr);
  o->set_momentum(oc.momentum);
  o->set_weight_decay(oc.weight_decay);
  o->set_beta1(oc.beta1);
  o->set_beta2(oc.beta2);
  o->set_eps(oc.eps);
  reply->set_dataset(config_.dataset);
  reply->set_seed(config_.seed);
  reply->set_global_batch(static_cast<int32_t>(global_batch_));
  reply->set_train_samples(train_samples_);
  reply->set_digest_every(config_.digest_every);
  reply->set_param_count(model_->ParamCount());
  reply->set_chunk_floats(wire::kChunkFloats);
  reply->set_max_batch(max_batch);
  reply->set_compression(config_.compression);
  return grpc::Status::OK;
}

TrainStream* Hub::NewTrainStream(const std::string& peer) { return new TrainStream(*this, peer, &write_cpu_ns_); }

grpc::Status Hub::OpenTrainStream(const proto::WorkerMessage& first, TrainStream* stream, int* worker_id) {
  if (!first.has_hello())
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "the first message on a Train stream must be Hello");
  std::lock_guard<std::mutex> lock(mu_);
  const int id = first.hello().worker_id();
  if (id < 0 || id >= static_cast<int>(slots_.size()))
    return grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown worker id " + std::to_string(id) + " (Join first)");
  if (!config_.token.empty() && first.hello().token() != config_.token)
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "wrong or missing token");
  WorkerSlot* slot = slots_[id].get();
  if (slot->state != WorkerSlot::State::kJoined)
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "worker " + std::to_string(id) + " is " + StateName(slot->state) + ", not waiting for a stream");
  {
    std::lock_guard<std::mutex> ol(slot->stream_mu);
    slot->stream = stream;
  }
  slot->state = WorkerSlot::State::kWaiting;
  slot->placement = first.hello().placement();
  if (!slot->placement.empty()) spdlog::info("worker {} placement: {}", id, slot->placement);
  *worker_id = id;
  cv_.notify_all();
  return grpc::Status::OK;
}

grpc::Status Hub::OnTrainMessage(int worker_id, const proto::WorkerMessage& message) {
  std::string error;
  std::lock_guard<std::mutex> lock(mu_);
  WorkerSlot* slot = slots_[worker_id].get();
  if (slot->state == WorkerSlot::State::kLate && message.has_gradient()) {
    // The step it was late for went on without it; its gradient is stale.
    // Once the whole of it is in, the worker is evidently back: it takes
    // part again from the next step, with the current weights.
    if (message.gradient().last()) {
      slot->state = WorkerSlot::State::kWaiting;
      spdlog::info("worker {} ({}) is back after missing a step; it rejoins at the next step", slot->id, slot->name);
      cv_.notify_all();
    }
    return grpc::Status::OK;
  }
  if (!message.has_gradient())
    error = "expected a gradient chunk";
  else if (slot->state != WorkerSlot::State::kActive)
    error = "gradient from a worker that is not in the step loop";
  else
    error = slot->inbox.Accept(message.gradient());
  gradient_bytes_in_ += message.gradient().values_size() * sizeof(float) + message.gradient().packed().size();
  if (!error.empty()) return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, error);
  if (slot->inbox.complete()) {
    slot->complete_at = std::chrono::steady_clock::now();
    slot->device_status = message.gradient().device();
    cv_.notify_all();
  }
  return grpc::Status::OK;
}

void Hub::CloseTrainStream(int worker_id, const grpc::Status& why) {
  std::lock_guard<std::mutex> lock(mu_);
  WorkerSlot* slot = slots_[worker_id].get();
  {
    // After this the step loop cannot reach the stream, which may then finish.
    std::lock_guard<std::mutex> ol(slot->stream_mu);
    slot->stream = nullptr;
  }
  const bool was_in = slot->state != WorkerSlot::State::kGone;
  slot->state = WorkerSlot::State::kGone;
  slot->inbox.Discard();
  controller_.Forget(worker_id);
  cv_.notify_all();
  if (!why.ok())
    spdlog::warn("worker {} ({}) refused and dropped: {}", slot->id, slot->name, why.error_message());
  else if (was_in && !finished_)
    spdlog::warn("worker {} ({}) left: stream closed", slot->id, slot->name);
}

grpc::Status Hub::Leave(const proto::LeaveRequest& req) {
  std::lock_guard<std::mutex> lock(mu_);
  const int id = req.worker_id();
  if (id < 0 || id >= static_cast<int>(slots_.size()))
    return grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown worker id " + std::to_string(id));
  if (!config_.token.empty() && req.token() != config_.token)
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "wrong or missing token");
  WorkerSlot* slot = slots_[id].get();
  slot->left_because = req.reason();
  if (slot->state != WorkerSlot::State::kGone)
    spdlog::info("worker {} ({}) leaves: {}", id, slot->name, req.reason().empty() ? "no reason given" : req.reason());
  slot->state = WorkerSlot::State::kGone;
  slot->inbox.Discard();
  controller_.Forget(id);
  cv_.notify_all();
  return grpc::Status::OK;
}

}  // namespace mt
