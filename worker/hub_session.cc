#include "worker/hub_session.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/data/partition.h"
#include "core/data/sampler.h"
#include "core/optim/optimizer_proto.h"
#include "core/trace/span.h"
#include "core/train/local_sgd.h"
#include "core/train/run_plan.h"
#include "core/util/digest.h"
#include "core/util/seconds.h"
#include "kernels/cpu/cpu_backend.h"
#include "proto/wire.h"
#include "wire/compression_proto.h"
#include "worker/compute_probe.h"
#include "worker/worker_trace.h"

namespace mt {
namespace {

// Where the floats that travel begin: the lowest trained layer's parameters.
// A hub's encoding, or a protocol error for one this build does not know.
Compression EncodingOf(proto::Compression c) {
  try {
    return FromProto(c);
  } catch (const std::invalid_argument& e) {
    throw HubProtocolError(std::string("hub sent ") + e.what());
  }
}

size_t ExchangedBegin(const Model& model) {
  const auto trained = model.TrainedRanges();
  if (trained.empty()) throw HubProtocolError("the hub froze every layer: nothing would train");
  return trained.front().first;
}

}  // namespace

HubSession::HubSession(const WorkerConfig& cfg, const proto::JoinReply& join, HubLink& link,
                       LocalTrainer& trainer, WorkerTotals& totals, WorkerControl& control,
                       EventFile* events)
    : cfg_(cfg),
      join_(join),
      link_(link),
      trainer_(trainer),
      totals_(totals),
      control_(control),
      events_(events),
      sender_(link, join, trainer.model().ParamCount(), ExchangedBegin(trainer.model()),
              trainer.model().ParamMatrices()),
      private_(join.privacy()),
      pacer_(PacerFor(cfg)) {
  local_ = !cfg.data_dir.empty();
  if (join.data().share_count_size() > 0) {
    // mthub --partition: this worker's own samples of the shared set, the
    // same on every device from the same integers.
    const std::vector<uint16_t> labels = DatasetLabels(trainer.data());
    ClassShare share;
    share.start.assign(join.data().share_start().begin(), join.data().share_start().end());
    share.count.assign(join.data().share_count().begin(), join.data().share_count().end());
    try {
      own_ = PartitionIndices(labels, static_cast<int>(share.count.size()), share, join.seed());
    } catch (const std::invalid_argument& e) {
      throw HubProtocolError(std::string("the hub's partition share does not fit the data here (") +
                             e.what() + "); is the dataset the same on hub and worker?");
    }
    if (own_.empty()) throw HubProtocolError("the hub gave this worker an empty partition share");
    local_ = true;
    totals.share_classes.assign(share.count.size(), 0);
    for (uint32_t i : own_) ++totals.share_classes[labels[i]];
    // Which share, in the hub's words ("worker 3 joined", share 3 mod
    // --workers), so the two logs can be read side by side.
    std::string classes;
    for (size_t c = 0; c < totals.share_classes.size(); ++c)
      if (totals.share_classes[c] > 0)
        classes += (classes.empty() ? "" : ", ") + std::to_string(c) + ": " +
                   std::to_string(totals.share_classes[c]);
    spdlog::info(
        "--partition: worker {} trains on its own share alone (the hub's share {} mod --workers): "
        "{} samples, by class {}",
        join.worker_id(), join.worker_id(), own_.size(), classes);
  }
  indices_.resize(static_cast<size_t>(trainer.capacity()));
  staging_.resize(trainer.model().ParamCount() * 3);  // weights + up to two optimizer slots
  if (join.drift_correction()) {
    drift_.assign(trainer.model().ParamCount(), 0.0f);
    own_change_.reserve(trainer.model().ParamCount());
  }
  result_codecs_ = MakeSegmentCodecs(sender_.segments(), trainer.model().ParamMatrices());
  if (join.has_secure_aggregation()) {
    secure_ = std::make_unique<SecureUpdate>(join, ExchangedBegin(trainer.model()));
    sender_.set_masker([this](size_t first, const float* values, size_t n, uint32_t* out) {
      secure_->Mask(first, values, n, out);
    });
  }
  if (pacer_.active())
    sender_.set_early_send_hooks([this] { pacer_.Pay(&pace_mark_); },
                                 [this] { pace_mark_ = pacer_.Now(); });
}

void HubSession::set_trace(WorkerTrace* trace) {
  trace_ = trace;
  sender_.set_trace(trace);
}

HubSession::Outcome HubSession::Run() {
  proto::HubMessage m;
  while (link_.Read(&m)) {
    if (m.has_secagg_holders() || m.has_secagg_unmask()) {
      TakeSecure(m);
      continue;
    }
    const auto arrived = Clock::now();
    if (awaiting_) {
      exchange_ms_ = 1e3 * Seconds(arrived - sent_at_);
      awaiting_ = false;
      if (trace_)
        trace_->Add(trace::MakeSpan(trace::SpanKind::kWaitResult, trace::ToMicros(sent_at_),
                                    trace::ToMicros(arrived)));
    }
    if (join_.overlap_rounds()) {
      // The model is this thread's again (a step in progress ends first).
      const int ahead = lookahead_.Stop();
      ahead_steps_ += ahead;
      totals_.steps_ahead += ahead;
    }
    if (control_.stop_requested()) {
      leave_reason_ = control_.stop_request_reason();
      return Outcome::kLeave;
    }
    if (m.has_stop()) {
      spdlog::info("hub says goodbye: {} (after {} steps; test accuracy {:.4f})", m.stop().reason(),
                   m.stop().steps(), m.stop().test_accuracy());
      totals_.hub_accuracy = m.stop().test_accuracy();
      if (events_)
        events_->Write("goodbye", {{"reason", m.stop().reason()},
                                   {"steps", m.stop().steps()},
                                   {"test_accuracy", m.stop().test_accuracy()}});
      control_.OnGoodbye(m.stop().test_accuracy(), m.stop().reason());
      return Outcome::kGoodbye;
    }
    if (m.has_left_out()) {
      ++totals_.steps_left_out;
      if (events_)
        events_->Write("left_out",
                       {{"step", m.left_out().step()}, {"reason", m.left_out().reason()}});
      spdlog::warn("left out of step {}: {}; waiting for the current weights",
                   m.left_out().step() + 1, m.left_out().reason());
      DiscardAhead();
      continue;
    }
    const proto::StepPlan* plan = nullptr;
    if (m.has_state()) {
      DiscardAhead();
      TakeState(m.state());
    } else if (m.has_result()) {
      if (TakeResult(m.result())) plan = &m.result().plan();
    } else if (m.has_plan()) {
      plan = &m.plan();
    }
    if (!plan) continue;
    if (trace_ && plan->hub_time_us() > 0)
      trace_->OnPlan(plan->hub_time_us(), trace::ToMicros(arrived));
    leave_reason_ = PolicyStopReason(cfg_.policy, Device());
    if (!leave_reason_.empty()) return Outcome::kLeave;
    Follow(*plan);
  }
  lookahead_.Stop();
  if (!control_.stop_requested()) return Outcome::kBroken;
  leave_reason_ = control_.stop_request_reason();
  return Outcome::kLeave;
}

void HubSession::Stage(uint64_t offset, const google::protobuf::RepeatedField<float>& values,
                       size_t limit, float* into) {
  const size_t n = static_cast<size_t>(values.size());
  if (offset > limit || n > limit - offset)
    throw HubProtocolError("hub sent a malformed chunk (offset " + std::to_string(offset) + ")");
  std::copy(values.begin(), values.end(), into + offset);
}

bool HubSession::TakeState(const proto::StateChunk& s) {
  Stage(s.offset(), s.values(), staging_.size(), staging_.data());
  if (!s.last()) return false;
  const trace::ScopedSpan span(trace_, trace::SpanKind::kApplyState, -1, s.step());
  OptimizerState state = FromProto(s.optimizer());
  Model& model = trainer_.model();
  const size_t p = model.ParamCount();
  const size_t total = s.offset() + static_cast<size_t>(s.values_size());
  if (total < p) throw HubProtocolError("hub sent a state shorter than the model");
  if (total == p && state.steps == 0)
    state.slots.assign(trainer_.optimizer().slot_values(), 0.0f);  // never stepped: all zero
  else
    state.slots.assign(staging_.begin() + static_cast<std::ptrdiff_t>(p),
                       staging_.begin() + static_cast<std::ptrdiff_t>(total));
  model.SetParams(staging_.data());
  trainer_.optimizer().LoadState(state);
  if (steps_ > 0) ++totals_.resyncs;
  spdlog::info("received the model at step {}", s.step());
  if (events_) events_->Write("state_received", {{"step", s.step()}});
  return true;
}

bool HubSession::TakeResult(const proto::StepResult& r) {
  Model& model = trainer_.model();
  const size_t p = model.ParamCount();
  const std::vector<wire::Segment>& segments = sender_.segments();
  // Straight into the gradient buffer, which the optimizer reads: the
  // worker's own gradient has left already, and a copy less is on the
  // critical path of every step.
  float* into = kernels::CpuBackend::Data(model.grads());
  // A result starts at the first segment; one abandoned half way (this
  // worker was left out) is simply started over.
  if (r.offset() == segments.front().begin) result_next_ = 0;
  if (result_next_ >= segments.size() || r.offset() != segments[result_next_].begin)
    throw HubProtocolError("hub sent a malformed chunk (offset " + std::to_string(r.offset()) +
                           ")");
  SegmentCodec& codec = result_codecs_[result_next_];
  const wire::Segment& seg = segments[result_next_++];
  if (r.packed().empty() && seg.size() > 0) {
    if (static_cast<size_t>(r.values_size()) != seg.size() ||
        r.compression() != proto::COMPRESSION_NONE)
      throw HubProtocolError("hub sent a malformed chunk (" + std::to_string(r.values_size()) +
                             " values at offset " + std::to_string(r.offset()) + ")");
    Stage(r.offset(), r.values(), p, into);
  } else {
    if (r.values_size() != 0)
      throw HubProtocolError("hub sent a chunk with both floats and encoded bytes");
    const std::string why = codec.Decode(EncodingOf(r.compression()), r.packed().data(),
                                         r.packed().size(), into + seg.begin);
    if (!why.empty()) throw HubProtocolError("hub sent a malformed chunk: " + why);
  }
  if (!r.last()) return false;
  if (result_next_ != segments.size())
    throw HubProtocolError("hub sent a result that ends before its last segment");
  if (r.local_steps() > 0) {
    // The round's averaged change, added to the weights it started from,
    // exactly as the hub adds it to its master copy: the next round's
    // anchor, the same on every worker.
    if (round_start_.size() != p) throw HubProtocolError("hub sent a round result out of turn");
    if (join_.drift_correction() && own_change_.size() == p)
      local_sgd::UpdateDrift(drift_.data(), into, own_change_.data(), p, own_steps_);
    local_sgd::AddChange(round_start_.data(), into, p);
    anchored_ = true;
    if (ahead_steps_ > 0) {
      // The steps taken ahead move onto the average.
      local_sgd::MoveOnto(round_start_.data(), kernels::CpuBackend::Data(model.params()),
                          sent_weights_.data(), p, into);
      // Moved once: they now count in the next round this worker takes.
      round_ahead_ = ahead_steps_;
      ahead_steps_ = 0;
    } else {
      std::copy(round_start_.begin(), round_start_.end(), into);
    }
    model.SetParams(into);
  } else {
    if (ahead_steps_ > 0) throw HubProtocolError("hub sent a step's result in a round");
    trainer_.ApplyGradients();
  }
  totals_.last_mean_loss = r.mean_loss();
  control_.OnResult(r.mean_loss());
  return true;
}

void HubSession::Follow(const proto::StepPlan& plan) {
  sender_.set_compression(EncodingOf(plan.compression()));
  for (const auto& a : plan.assignments()) {
    if (a.worker_id() != join_.worker_id()) continue;
    // The round's masks, and the next round's bundle on its way meanwhile.
    if (secure_) link_.Send(secure_->OnPlan(plan));
    return Compute(a);
  }
}

void HubSession::TakeSecure(const proto::HubMessage& m) {
  if (!secure_) throw HubProtocolError("hub sent secure aggregation messages it did not announce");
  link_.Send(m.has_secagg_holders() ? secure_->OnHolders(m.secagg_holders())
                                    : secure_->OnUnmask(m.secagg_unmask()));
}

void HubSession::FillIndices(int64_t epoch, int64_t offset, int b) {
  const size_t size = trainer_.data().Size();
  if (local_) return FillOwn(b);
  if (epoch != order_epoch_) {
    order_ = EpochOrder(size, join_.seed(), epoch);
    order_epoch_ = epoch;
  }
  // Written so no sum can overflow, whatever the hub sent.
  if (offset < 0 || b < 0 || static_cast<uint64_t>(offset) > order_.size() ||
      static_cast<size_t>(b) > order_.size() - static_cast<size_t>(offset))
    throw HubProtocolError("hub assigned samples [" + std::to_string(offset) + ", " +
                           std::to_string(offset + b) + ") beyond the " +
                           std::to_string(order_.size()) +
                           " training samples here; is the dataset the same on hub and worker?");
  std::copy(order_.begin() + offset, order_.begin() + offset + b, indices_.begin());
}

void HubSession::FillOwn(int b) {
  // Own files, or own share: walk a private shuffle of them, a new one
  // each pass.
  const size_t size = own_.empty() ? trainer_.data().Size() : own_.size();
  for (int i = 0; i < b; ++i) {
    if (local_cursor_ >= local_order_.size()) {
      local_order_ = EpochOrder(size, join_.seed() ^ 0x5bd1e995u, local_pass_++);
      if (!own_.empty())
        for (uint32_t& index : local_order_) index = own_[index];
      local_cursor_ = 0;
    }
    indices_[static_cast<size_t>(i)] = local_order_[local_cursor_++];
  }
}

void HubSession::CheckAssignment(const proto::Assignment& a) const {
  const int b = a.batch();
  if (b < 1 || b > trainer_.capacity())
    throw HubProtocolError("hub assigned a batch of " + std::to_string(b) +
                           " (this worker takes 1 to " + std::to_string(trainer_.capacity()) + ")");
  if (a.local_steps() < 0 || a.local_steps() > wire::kMaxLocalSteps)
    throw HubProtocolError("hub assigned " + std::to_string(a.local_steps()) +
                           " local steps (at most " + std::to_string(wire::kMaxLocalSteps) + ")");
  const int64_t most = wire::kMaxSamplePosition;
  if (a.step() < 0 || a.step() > most || a.epoch() < 0 || a.epoch() > most || a.offset() < 0 ||
      a.offset() > most || a.stride() < 0 || a.stride() > most)
    throw HubProtocolError("hub sent a malformed assignment (step " + std::to_string(a.step()) +
                           ", epoch " + std::to_string(a.epoch()) + ", offset " +
                           std::to_string(a.offset()) + ", stride " + std::to_string(a.stride()) +
                           ")");
}

void HubSession::Compute(const proto::Assignment& a) {
  CheckAssignment(a);
  const int b = a.batch();
  if (trace_) trace_->SetStep(a.step());
  if (a.local_steps() > 0) return ComputeRound(a);
  const auto t0 = Clock::now();
  const Model& model = trainer_.model();
  const bool digest = join_.digest_every() > 0 && a.step() % join_.digest_every() == 0;
  const uint64_t weights_digest =
      digest ? DigestFloats(kernels::CpuBackend::Data(model.params()), model.ParamCount()) : 0;
  const double loss = Step(a, 0, StepMode::kExchanged);
  const double ms = 1e3 * (Seconds(Clock::now() - t0) - sender_.early_send_seconds());
  totals_.compute_seconds += ms / 1e3;
  totals_.samples += b;
  ++totals_.steps;
  ++steps_;
  // The step's compute, early sends included; the last segment's encode
  // and send follow as spans of their own.
  if (trace_)
    trace_->Add(trace::MakeSpan(trace::SpanKind::kStep, trace::ToMicros(t0), trace::NowMicros(), -1,
                                a.step()));
  FinishGradient(b, loss, ms, digest, weights_digest);
  RecordHistory(a.step() + 1, 1, b, b, loss, ms);
  const auto now = Clock::now();
  if (Seconds(now - last_log_) >= cfg_.log_every_seconds) {
    spdlog::info("step {} epoch {} batch {} loss {:.4f} compute {:.1f} ms", a.step() + 1,
                 a.epoch() + 1, b, loss / b, ms);
    last_log_ = now;
  }
}

double HubSession::Step(const proto::Assignment& a, int64_t k, StepMode mode) {
  const int b = a.batch();
  const int64_t step = a.step() + k;
  const int64_t offset = a.offset() + k * a.stride();
  if (mode == StepMode::kAhead && offset + b > static_cast<int64_t>(trainer_.data().Size()))
    FillOwn(b);
  else
    FillIndices(a.epoch(), offset, b);
  GradientSender* sending = nullptr;
  if (mode == StepMode::kExchanged) {
    // The upper layers' gradients leave while the lower ones still compute
    // (a private update waits for its norm: all of it leaves at the end).
    if (!private_.enabled()) sending = &sender_;
    sender_.Begin(step, kernels::CpuBackend::Data(trainer_.model().grads()));
  }
  pace_mark_ = pacer_.Now();
  const double loss = trainer_.ComputeGradients(indices_.data(), b,
                                                DropoutSeed(join_.seed(), step, offset), sending);
  if (mode == StepMode::kExchanged)
    MakePrivate(kernels::CpuBackend::Data(trainer_.model().grads()));
  if (mode != StepMode::kExchanged) {
    // FedProx: held near the round's start (the anchor, in a round).
    const size_t p = trainer_.model().ParamCount();
    if (join_.prox_mu() > 0 && mode == StepMode::kLocal && round_start_.size() == p)
      local_sgd::AddProximal(kernels::CpuBackend::Data(trainer_.model().grads()),
                             kernels::CpuBackend::Data(trainer_.model().params()),
                             round_start_.data(), p, join_.prox_mu());
    trainer_.ApplyGradients();
    if (join_.drift_correction() && drift_.size() == p)
      local_sgd::AddChange(kernels::CpuBackend::Data(trainer_.model().params()), drift_.data(), p);
  }
  pacer_.Pay(&pace_mark_);
  control_.OnStep(step, b);
  return loss;
}

void HubSession::RecordHistory(int64_t step, int steps, int batch, int samples, double loss,
                               double ms) {
  StepSample sample;
  sample.step = step;
  sample.steps = std::max(1, steps);
  sample.seconds = Seconds(Clock::now() - totals_.started);
  sample.loss_sum = loss;
  sample.samples = samples;
  sample.wall_ms = ms;
  if (StepPoint* point = totals_.history.Add(sample)) point->batches = {{"batch", batch}};
}

void HubSession::MakePrivate(float* v) {
  if (!private_.enabled()) return;
  // What travels: from the lowest trained layer up (the last segment's start).
  const size_t begin = sender_.segments().back().begin;
  private_.Apply(v + begin, trainer_.model().ParamCount() - begin);
}

void HubSession::FinishGradient(int samples, double loss, double ms, bool digest,
                                uint64_t weights_digest) {
  GradientSender::Report report;
  report.samples = samples;
  report.loss_sum = loss;
  report.compute_ms = ms;
  report.has_digest = digest;
  report.digest = weights_digest;
  report.device = Device();
  report.exchange_ms = exchange_ms_;
  sender_.Finish(report);  // a broken stream shows in the next Read
  sent_at_ = Clock::now();
  awaiting_ = true;
}

const DeviceState& HubSession::Device() {
  if (auto pushed = control_.pushed_device_state()) {
    device_ = *pushed;
  } else if (cfg_.read_system_device_state && Clock::now() >= next_device_read_) {
    device_ = ReadSystemDeviceState();
    next_device_read_ = Clock::now() + std::chrono::seconds(5);
  }
  return device_;
}

}  // namespace mt
