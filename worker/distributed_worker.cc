// mtworker --hub: join, receive the model, then for each step compute the
// gradient on the assigned samples, send it, and apply the hub's average
// with the same optimizer code the hub runs on its master copy.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include "core/compress/gradient_codec.h"
#include "core/data/dataset.h"
#include "core/data/sampler.h"
#include "core/model/model_spec.h"
#include "core/optim/optimizer.h"
#include "core/train/batch_buffer.h"
#include "core/util/atomic_file.h"
#include "core/util/digest.h"
#include "core/util/json.h"
#include "core/util/process_stats.h"
#include "core/util/stop_signal.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/dropout_hash.h"
#include "proto/wire.h"
#include "worker/compute_devices.h"
#include "worker/device_state.h"
#include "worker/hub_connection.h"
#include "worker/worker_control.h"
#include "worker/worker_config.h"

namespace mt {
namespace {

using Clock = std::chrono::steady_clock;
using TrainStream = grpc::ClientReaderWriter<proto::WorkerMessage, proto::HubMessage>;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string HostName() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "worker";
  return buf;
}

OptimizerConfig FromSettings(const proto::OptimizerSettings& s) {
  OptimizerConfig c;
  c.kind = s.kind();
  c.lr = s.lr();
  c.momentum = s.momentum();
  c.weight_decay = s.weight_decay();
  c.beta1 = s.beta1();
  c.beta2 = s.beta2();
  c.eps = s.eps();
  return c;
}

// What the worker did over all its sessions with the hub: a reconnect
// starts a new session but the report covers the whole run.
struct WorkerTotals {
  int64_t steps = 0, samples = 0, resyncs = 0, steps_left_out = 0, reconnects = 0;
  double compute_seconds = 0, last_mean_loss = 0, hub_accuracy = -1;
};

// The training state of one worker between messages, for one session.
class StepLoop {
 public:
  StepLoop(const WorkerConfig& cfg, const proto::JoinReply& join, TrainStream& stream, ComputeDevices& devices,
           WorkerTotals& totals, WorkerControl& control)
      : cfg_(cfg), join_(join), stream_(stream), devices_(devices), totals_(totals), control_(control) {
    kernels::CpuBackend& home = devices_.cpu();
    model_ = BuildModel(join.model(), home);
    if (model_->ParamCount() != join.param_count())
      throw std::runtime_error("model from the hub has " + std::to_string(model_->ParamCount()) +
                               " parameters here but " + std::to_string(join.param_count()) + " at the hub");
    local_ = !cfg.data_dir.empty();
    data_ = LoadDataset(local_ ? cfg.data_dir : join.dataset(), Split::kTrain);
    if (data_->SampleShape() != model_->input_shape())
      throw std::runtime_error("training data " + (local_ ? cfg.data_dir : join.dataset()) + " has samples of " +
                               data_->SampleShape().ToString() + " but the model takes " +
                               model_->input_shape().ToString());
    capacity_ = std::max(1, join.max_batch() > 0 ? std::min(join.max_batch(), join.global_batch()) : join.global_batch());
    batch_ = std::make_unique<BatchBuffer>(data_->SampleShape(), capacity_);
    {
      // Placement is timed on this device's own data at a typical batch.
      const int n = static_cast<int>(std::min<size_t>({static_cast<size_t>(capacity_), 64, data_->Size()}));
      std::vector<uint32_t> first(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i) first[i] = static_cast<uint32_t>(i);
      batch_->Fill(*data_, first.data(), n);
      model_ = BuildModel(join.model(), home,
                          devices_.Place(join.model(), batch_->images(), batch_->labels(), n, join.seed()));
    }
    // Parameters, gradients and the optimizer stay on the CPU whatever the
    // placement, so this copy stays bit-identical to the hub's master copy.
    optimizer_ = MakeOptimizer(FromSettings(join.optimizer()), home, model_->ParamCount());
    model_->Reserve(capacity_);
    indices_.resize(capacity_);
    staging_.resize(model_->ParamCount() * 3);  // weights + up to two optimizer slots
    compression_ = ParseCompression(join.compression().empty() ? "none" : join.compression());
    if (compression_ != Compression::kNone) residual_.assign(model_->ParamCount(), 0.0f);
  }

  enum class Outcome { kGoodbye, kBroken, kLeave };

  // Until the hub says goodbye, the stream breaks, or this worker should
  // leave (stopped, or its device policy says so: leave_reason()).
  Outcome Run() {
    proto::HubMessage m;
    while (stream_.Read(&m)) {
      if (control_.stop_requested()) {
        leave_reason_ = control_.stop_request_reason();
        return Outcome::kLeave;
      }
      if (m.has_stop()) {
        spdlog::info("hub says goodbye: {} (after {} steps; test accuracy {:.4f})", m.stop().reason(),
                     m.stop().steps(), m.stop().test_accuracy());
        totals_.hub_accuracy = m.stop().test_accuracy();
        control_.OnGoodbye(m.stop().test_accuracy(), m.stop().reason());
        return Outcome::kGoodbye;
      }
      if (m.has_left_out()) {
        ++totals_.steps_left_out;
        spdlog::warn("left out of step {}: {}; waiting for the current weights", m.left_out().step() + 1,
                     m.left_out().reason());
        continue;
      }
      const proto::StepPlan* plan = nullptr;
      if (m.has_state()) {
        TakeState(m.state());
      } else if (m.has_result()) {
        if (TakeResult(m.result())) plan = &m.result().plan();
      } else if (m.has_plan()) {
        plan = &m.plan();
      }
      if (!plan) continue;
      leave_reason_ = PolicyStopReason(cfg_.policy, Device());
      if (!leave_reason_.empty()) return Outcome::kLeave;
      Follow(*plan);
    }
    return control_.stop_requested() ? (leave_reason_ = control_.stop_request_reason(), Outcome::kLeave)
                                     : Outcome::kBroken;
  }

  const std::string& leave_reason() const { return leave_reason_; }

  std::string placement() const { return model_->PlacementSummary(); }

  Json Report() const {
    Json r = Json::Object();
    r.Set("mode", "worker")
        .Set("hub", cfg_.hub)
        .Set("device", DeviceLabel(*model_))
        .Set("opencl_device", devices_.opencl_name())
        .Set("placement", model_->PlacementSummary())
        .Set("threads", cfg_.threads)
        .Set("local_data", local_)
        .Set("test_accuracy", totals_.hub_accuracy)
        .Set("final_loss", totals_.last_mean_loss)
        .Set("steps", totals_.steps)
        .Set("samples", totals_.samples)
        .Set("train_seconds", totals_.compute_seconds)
        .Set("samples_per_second", totals_.compute_seconds > 0 ? totals_.samples / totals_.compute_seconds : 0.0)
        .Set("mean_compute_ms", totals_.steps ? 1e3 * totals_.compute_seconds / totals_.steps : 0.0)
        .Set("resyncs", totals_.resyncs)
        .Set("steps_left_out", totals_.steps_left_out)
        .Set("reconnects", totals_.reconnects)
        .Set("slowdown", cfg_.slowdown)
        .Set("max_batch", capacity_)
        .Set("peak_rss_bytes", PeakRssBytes());
    return r;
  }

 private:
  void Stage(uint64_t offset, const google::protobuf::RepeatedField<float>& values, size_t limit) {
    const size_t n = static_cast<size_t>(values.size());
    if (offset + n > limit)
      throw std::runtime_error("hub sent a malformed chunk (offset " + std::to_string(offset) + ")");
    std::copy(values.begin(), values.end(), staging_.begin() + offset);
  }

  bool TakeState(const proto::StateChunk& s) {
    Stage(s.offset(), s.values(), staging_.size());
    if (!s.last()) return false;
    OptimizerState state = OptimizerState::Parse(s.optimizer_state());
    const size_t p = model_->ParamCount();
    const size_t total = s.offset() + static_cast<size_t>(s.values_size());
    state.slots.assign(staging_.begin() + p, staging_.begin() + total);
    model_->SetParams(staging_.data());
    optimizer_->LoadState(state);
    if (steps_ > 0) ++totals_.resyncs;
    spdlog::info("received the model at step {}", s.step());
    return true;
  }

  bool TakeResult(const proto::StepResult& r) {
    if (compression_ == Compression::kNone) {
      Stage(r.offset(), r.values(), model_->ParamCount());
    } else {
      const size_t p = model_->ParamCount();
      if (r.offset() >= p) throw std::runtime_error("hub sent a malformed chunk (offset " + std::to_string(r.offset()) + ")");
      const size_t n = std::min<size_t>(wire::kChunkFloats, p - r.offset());
      const std::string why = DecodeFloats(compression_, r.packed().data(), r.packed().size(), n, staging_.data() + r.offset());
      if (!why.empty()) throw std::runtime_error("hub sent a malformed chunk: " + why);
    }
    if (!r.last()) return false;
    devices_.cpu().Upload(staging_.data(), model_->grads().Slice(0, model_->ParamCount()));
    optimizer_->Step(model_->params(), model_->grads());
    totals_.last_mean_loss = r.mean_loss();
    control_.OnResult(r.mean_loss());
    return true;
  }

  // Trains on this worker's share of the planned step, if it has one.
  void Follow(const proto::StepPlan& plan) {
    for (const auto& a : plan.assignments())
      if (a.worker_id() == join_.worker_id()) return Compute(a);
  }

  void FillIndices(const proto::Assignment& a) {
    const int b = a.batch();
    if (local_) {
      // Own files: walk a private shuffle of them, a new one each pass.
      for (int i = 0; i < b; ++i) {
        if (local_cursor_ >= local_order_.size()) {
          local_order_ = EpochOrder(data_->Size(), join_.seed() ^ 0x5bd1e995u, local_pass_++);
          local_cursor_ = 0;
        }
        indices_[i] = local_order_[local_cursor_++];
      }
      return;
    }
    if (a.epoch() != order_epoch_) {
      order_ = EpochOrder(data_->Size(), join_.seed(), a.epoch());
      order_epoch_ = a.epoch();
    }
    if (a.offset() < 0 || static_cast<size_t>(a.offset() + b) > order_.size())
      throw std::runtime_error("hub assigned samples [" + std::to_string(a.offset()) + ", " +
                               std::to_string(a.offset() + b) + ") beyond the " + std::to_string(order_.size()) +
                               " training samples here; is the dataset the same on hub and worker?");
    std::copy(order_.begin() + a.offset(), order_.begin() + a.offset() + b, indices_.begin());
  }

  void Compute(const proto::Assignment& a) {
    const int b = a.batch();
    if (b < 1 || b > capacity_) throw std::runtime_error("hub assigned a batch of " + std::to_string(b));
    const auto t0 = Clock::now();
    FillIndices(a);
    batch_->Fill(*data_, indices_.data(), b);
    model_->SetBatch(batch_->images(), batch_->labels(), b);
    const bool digest = join_.digest_every() > 0 && a.step() % join_.digest_every() == 0;
    const uint64_t weights_digest =
        digest ? DigestFloats(kernels::CpuBackend::Data(model_->params()), model_->ParamCount()) : 0;
    const double loss = model_->ComputeGradients(kernels::MixBits(join_.seed()) ^ static_cast<uint64_t>(a.step()) ^
                                                 kernels::MixBits(static_cast<uint64_t>(a.offset()) + 1));
    if (cfg_.slowdown > 1)
      std::this_thread::sleep_for(std::chrono::duration<double>((cfg_.slowdown - 1) * Seconds(Clock::now() - t0)));
    const double ms = 1e3 * Seconds(Clock::now() - t0);
    totals_.compute_seconds += ms / 1e3;
    totals_.samples += b;
    ++totals_.steps;
    ++steps_;
    control_.OnStep(a.step(), b);
    const DeviceState& dev = Device();

    const float* g = kernels::CpuBackend::Data(model_->grads());
    const size_t p = model_->ParamCount();
    const size_t chunks = wire::ChunkCount(p);
    // One message reused every step: its payload string keeps its capacity,
    // so packing the gradient allocates nothing in the steady state.
    proto::WorkerMessage& m = outgoing_;
    for (size_t c = 0; c < chunks; ++c) {
      auto* gc = m.mutable_gradient();
      const size_t begin = c * wire::kChunkFloats, n = std::min<size_t>(wire::kChunkFloats, p - begin);
      gc->set_step(a.step());
      gc->set_offset(begin);
      if (compression_ == Compression::kNone)
        wire::PackFloats(g + begin, n, gc->mutable_values());
      else
        EncodeFloats(compression_, g + begin, n, residual_.data() + begin, gc->mutable_packed());
      const bool last = c + 1 == chunks;
      gc->set_last(last);
      if (last) {
        gc->set_batch(b);
        gc->set_loss_sum(loss);
        gc->set_compute_ms(ms);
        gc->set_has_digest(digest);
        gc->set_weights_digest(weights_digest);
        auto* ds = gc->mutable_device();
        ds->set_battery_percent(dev.battery_percent);
        ds->set_charging(dev.charging);
        ds->set_unmetered(dev.unmetered);
        ds->set_has_temperature(!std::isnan(dev.temperature_c));
        ds->set_temperature_c(std::isnan(dev.temperature_c) ? 0.0 : dev.temperature_c);
      }
      if (!stream_.Write(m)) return;  // Read will see the broken stream
    }
    const auto now = Clock::now();
    if (Seconds(now - last_log_) >= cfg_.log_every_seconds) {
      spdlog::info("step {} epoch {} batch {} loss {:.4f} compute {:.1f} ms", a.step() + 1, a.epoch() + 1, b,
                   loss / b, ms);
      last_log_ = now;
    }
  }

  // The device's state, pushed by the embedder or read from /sys at most
  // every few seconds (reading it costs file opens; it changes slowly).
  const DeviceState& Device() {
    if (auto pushed = control_.pushed_device_state()) {
      device_ = *pushed;
    } else if (cfg_.read_system_device_state && Clock::now() >= next_device_read_) {
      device_ = ReadSystemDeviceState();
      next_device_read_ = Clock::now() + std::chrono::seconds(5);
    }
    return device_;
  }

  const WorkerConfig& cfg_;
  const proto::JoinReply& join_;
  TrainStream& stream_;
  ComputeDevices& devices_;
  WorkerTotals& totals_;
  WorkerControl& control_;
  DeviceState device_;
  Clock::time_point next_device_read_ = Clock::now();
  std::string leave_reason_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<Dataset> data_;
  std::unique_ptr<BatchBuffer> batch_;
  bool local_ = false;
  int capacity_ = 1;
  std::vector<uint32_t> indices_, order_, local_order_;
  int64_t order_epoch_ = -1, local_pass_ = 0;
  size_t local_cursor_ = 0;
  std::vector<float> staging_;
  Compression compression_ = Compression::kNone;
  std::vector<float> residual_;  // error feedback: what encoding has not yet sent
  proto::WorkerMessage outgoing_;
  int64_t steps_ = 0;  // in this session
  Clock::time_point last_log_ = Clock::now();
};

}  // namespace

int RunWorker(const WorkerConfig& cfg, WorkerControl& control) {
  control.SetState(WorkerState::kStarting);
  ComputeDevices devices(cfg.device, static_cast<int>(cfg.threads));
  HubConnection hub(cfg.hub);
  proto::JoinRequest request;
  request.set_protocol_version(wire::kProtocolVersion);
  request.set_token(cfg.token);
  auto* d = request.mutable_device();
  d->set_name(cfg.name.empty() ? HostName() : cfg.name);
  d->set_cores(static_cast<int32_t>(std::thread::hardware_concurrency()));
  d->set_backend(devices.choice());
  d->set_opencl_device(devices.opencl_name());
  d->set_threads(static_cast<int32_t>(cfg.threads));
  d->set_memory_budget_bytes(cfg.memory_budget_bytes);
  if (!cfg.data_dir.empty()) request.set_local_samples(static_cast<int64_t>(LoadDataset(cfg.data_dir, Split::kTrain)->Size()));

  WorkerTotals totals;
  Json report;
  bool have_report = false;
  auto finish = [&](const std::string& reason) {
    if (!cfg.report_path.empty() && have_report) WriteFileAtomically(cfg.report_path, report.Dump());
    control.Finish(reason);
    return 0;
  };
  auto stop = [&] { return control.stop_requested(); };
  // Between sessions: 0.5 s, doubling to 8 s, back to 0.5 s after a session
  // that trained a while, so a flapping link does not hammer the hub.
  double backoff_s = 0.5;
  for (int session = 0;; ++session) {
    spdlog::info("joining hub at {} as {}", hub.target(), d->name());
    control.SetState(session == 0 ? WorkerState::kJoining : WorkerState::kReconnecting);
    proto::JoinReply join;
    try {
      join = hub.Join(request, cfg.connect_timeout_seconds, stop);
    } catch (const RunEnded& e) {
      if (session == 0) throw;
      spdlog::info("{}", e.what());
      return finish(e.what());
    } catch (const JoinStopped&) {
      return finish(control.stop_request_reason());
    } catch (const std::exception&) {
      if (!cfg.report_path.empty() && have_report) WriteFileAtomically(cfg.report_path, report.Dump());
      throw;
    }
    spdlog::info("joined as worker {}: model {}, dataset {}{}", join.worker_id(), join.model().name(),
                 cfg.data_dir.empty() ? join.dataset() : cfg.data_dir + " (local)",
                 join.compression().empty() || join.compression() == "none" ? "" : ", gradients " + join.compression());

    grpc::ClientContext context;
    auto stream = hub.OpenTrain(&context);
    control.AttachCall(&context, [&hub, &cfg, id = join.worker_id()](const std::string& reason) {
      hub.Leave(id, cfg.token, reason);
    });
    StepLoop loop(cfg, join, *stream, devices, totals, control);
    proto::WorkerMessage hello;
    hello.mutable_hello()->set_worker_id(join.worker_id());
    hello.mutable_hello()->set_token(cfg.token);
    hello.mutable_hello()->set_placement(loop.placement());
    stream->Write(hello);

    const auto started = Clock::now();
    const auto outcome = loop.Run();
    if (outcome == StepLoop::Outcome::kLeave) {
      control.SetState(WorkerState::kStopping);
      spdlog::info("leaving the run: {}", loop.leave_reason());
      if (!control.hub_told()) hub.Leave(join.worker_id(), cfg.token, loop.leave_reason());
      context.TryCancel();
    } else {
      stream->WritesDone();
    }
    const grpc::Status status = stream->Finish();
    control.DetachCall();
    report = loop.Report();
    have_report = true;
    if (outcome == StepLoop::Outcome::kGoodbye) return finish("the hub ended the run");
    if (outcome == StepLoop::Outcome::kLeave) return finish(loop.leave_reason());
    if (Seconds(Clock::now() - started) > 30) backoff_s = 0.5;
    control.SetState(WorkerState::kReconnecting);
    spdlog::warn("lost the hub at {}: {}; joining again in {:.1f} s", hub.target(),
                 status.ok() ? "stream closed without a goodbye" : status.error_message(), backoff_s);
    for (auto until = Clock::now() + std::chrono::duration<double>(backoff_s); Clock::now() < until && !stop();)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (stop()) return finish(control.stop_request_reason());
    backoff_s = std::min(2 * backoff_s, 8.0);
    ++totals.reconnects;
  }
}

}  // namespace mt
