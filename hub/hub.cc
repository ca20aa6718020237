#include "hub/hub.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <ctime>
#include <numeric>

#include "core/checkpoint/checkpoint.h"
#include "core/checkpoint/training_checkpoint.h"
#include "core/model/model_spec.h"
#include "core/train/evaluate.h"
#include "core/util/atomic_file.h"
#include "core/util/digest.h"
#include "core/util/stop_signal.h"
#include "hub/batch_split.h"
#include "hub/hub_service.h"
#include "proto/wire.h"

namespace mt {
namespace {

constexpr int kEvalBatch = 500;

double Seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

// CPU time of the calling thread: the hub's own work, which wall time on a
// busy machine would overstate by the time other processes held the core.
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// CPU time of the whole hub process: every gRPC thread receiving and
// parsing gradients, as well as the step loop and the writers.
double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

}  // namespace

Hub::Hub(HubConfig config)
    : config_(std::move(config)),
      backend_(static_cast<int>(config_.threads)),
      controller_(config_.worker_batches.empty() ? ParseBatchPolicy(config_.batch_policy) : BatchPolicy::kFixed) {
  if (config_.workers < 1) throw std::invalid_argument("--workers must be at least 1");
  if (config_.min_workers < 1 || config_.min_workers > config_.workers)
    throw std::invalid_argument("--min-workers must be between 1 and --workers (" + std::to_string(config_.workers) + ")");
  if (config_.resume && config_.checkpoint_dir.empty()) throw std::invalid_argument("--resume needs a checkpoint directory");
  if (!config_.checkpoint_dir.empty()) EnsureWritableDirectory(config_.checkpoint_dir, "--checkpoint-dir");
  spec_ = LoadModelSpec(config_.model);
  spec_text_ = ModelSpecToText(spec_);
  model_ = BuildModel(spec_, backend_);
  // The hub needs only the training set's size; the workers read the samples.
  const DatasetInfo train = PeekDataset(config_.dataset, Split::kTrain);
  test_ = LoadDataset(config_.dataset, Split::kTest);
  if (model_->input_shape() != train.sample)
    throw std::runtime_error("dataset " + config_.dataset + " has samples of " + train.sample.ToString() +
                             " but model " + spec_.name() + " takes " + model_->input_shape().ToString());
  train_samples_ = static_cast<int64_t>(train.size);
  global_batch_ = config_.global_batch > 0 ? config_.global_batch : 64 * config_.workers;
  if (!config_.worker_batches.empty()) {
    if (static_cast<int>(config_.worker_batches.size()) != config_.workers)
      throw std::invalid_argument("--worker-batches needs one size per worker (" + std::to_string(config_.workers) + ")");
    global_batch_ = std::accumulate(config_.worker_batches.begin(), config_.worker_batches.end(), int64_t{0});
  }
  if (global_batch_ < config_.workers)
    throw std::invalid_argument("global batch " + std::to_string(global_batch_) + " is smaller than the worker count");
  steps_per_epoch_ = (train_samples_ + global_batch_ - 1) / global_batch_;
  total_steps_ = steps_per_epoch_ * config_.epochs;
  if (config_.max_steps > 0) total_steps_ = std::min(total_steps_, config_.max_steps);
  model_->Reserve(kEvalBatch);
  model_->InitParams(config_.seed);
  optimizer_ = MakeOptimizer(config_.optimizer, backend_, model_->ParamCount());
  // A worker holds the model at its batch, its batch buffer, the optimizer's
  // slots and a staging copy of weights and slots for resyncs.
  const size_t model_per_sample = model_->MemoryBytes(2) - model_->MemoryBytes(1);
  bytes_per_sample_ = model_per_sample + (model_->input_shape().count() + 1) * sizeof(float);
  const size_t slots = optimizer_->SaveState().slots.size();
  fixed_bytes_ = model_->MemoryBytes(1) - model_per_sample + 2 * (model_->ParamCount() + slots) * sizeof(float);
  compression_ = ParseCompression(config_.compression);
  if (compression_ != Compression::kNone) broadcast_residual_.assign(model_->ParamCount(), 0.0f);
  if (config_.resume) ResumeFromCheckpoint();
}

void Hub::EncodeAverage() {
  if (compression_ == Compression::kNone) return;
  const size_t p = model_->ParamCount();
  const size_t chunks = wire::ChunkCount(p);
  encoded_average_.resize(chunks);
  for (size_t c = 0; c < chunks; ++c) {
    const size_t begin = c * wire::kChunkFloats, n = std::min<size_t>(wire::kChunkFloats, p - begin);
    EncodeFloats(compression_, average() + begin, n, broadcast_residual_.data() + begin, &encoded_average_[c]);
    // The master copy takes the step the workers will take: from the bytes.
    const std::string& bytes = encoded_average_[c];
    const std::string why = DecodeFloats(compression_, bytes.data(), bytes.size(), n, average() + begin);
    if (!why.empty()) throw std::logic_error("hub cannot decode its own broadcast: " + why);
  }
}

void Hub::ResumeFromCheckpoint() {
  const std::string latest = LatestCheckpoint(config_.checkpoint_dir);
  if (latest.empty()) {
    spdlog::info("--resume: no checkpoint in {} yet; starting from scratch", config_.checkpoint_dir);
    return;
  }
  const Checkpoint ck = LoadCheckpoint(latest);
  if (ck.model_spec != spec_text_)
    throw std::runtime_error("checkpoint " + latest + " is for a different model than --model " + config_.model);
  if (ck.weights.size() != model_->ParamCount())
    throw std::runtime_error("checkpoint " + latest + ": weight count does not match the model");
  if (ck.step > total_steps_)
    throw std::runtime_error("checkpoint " + latest + " is at step " + std::to_string(ck.step) + ", beyond this run's " +
                             std::to_string(total_steps_) + " steps (same --epochs, --steps and --global-batch?)");
  model_->SetParams(ck.weights.data());
  optimizer_->LoadState(ck.optimizer);
  if (ck.seed != config_.seed)
    spdlog::warn("--seed {} differs from the checkpoint's {}; keeping the checkpoint's so the data order continues",
                 config_.seed, ck.seed);
  config_.seed = ck.seed;
  step_ = ck.step;
  resumed_from_ = ck.step;
  spdlog::info("resumed from {} at step {} (epoch {})", latest, ck.step, ck.step / steps_per_epoch_ + 1);
}

Hub::~Hub() {
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
}

void Hub::Start() {
  service_ = std::make_unique<HubService>(*this);
  grpc::ServerBuilder builder;
  const std::string address = config_.bind + ":" + std::to_string(config_.port);
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &port_);
  builder.SetMaxReceiveMessageSize(wire::kMaxMessageBytes);
  builder.SetMaxSendMessageSize(wire::kMaxMessageBytes);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_FRAME_SIZE, wire::kHttp2FrameBytes);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, wire::kHttp2WindowBytes);
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (!server_ || port_ == 0) throw std::runtime_error("cannot listen on " + address + " (port in use?)");
}

void Hub::RequestStop() {
  stop_ = true;
  cv_.notify_all();
}

bool Hub::StopWanted() const { return stop_ || StopRequested(); }

std::vector<float> Hub::Weights() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<float> w(model_->ParamCount());
  model_->GetParams(w.data());
  return w;
}

bool Hub::WaitForWorkers(std::unique_lock<std::mutex>& lock) {
  auto ready = [&] {
    int n = 0;
    for (auto& s : slots_) n += s->state == WorkerSlot::State::kWaiting || s->state == WorkerSlot::State::kActive;
    return n;
  };
  auto last_log = Clock::now() - std::chrono::hours(1);
  while (ready() < config_.workers) {
    if (StopWanted()) return false;
    if (Seconds(Clock::now() - last_log) > 10) {
      spdlog::info("waiting for workers: {} of {} ready", ready(), config_.workers);
      last_log = Clock::now();
    }
    cv_.wait_for(lock, std::chrono::milliseconds(200));
  }
  return true;
}

bool Hub::WaitForMinWorkers(std::unique_lock<std::mutex>& lock) {
  auto last_log = Clock::now() - std::chrono::hours(1);
  for (;;) {
    const int n = static_cast<int>(Participants().size());
    if (n >= config_.min_workers) return true;
    if (StopWanted()) return false;
    if (Seconds(Clock::now() - last_log) > 10) {
      if (n == 0)
        spdlog::warn("no workers left; waiting for one to join");
      else
        spdlog::warn("{} worker(s) in the run, fewer than --min-workers {}: waiting for more before step {}", n,
                     config_.min_workers, step_ + 1);
      last_log = Clock::now();
    }
    cv_.wait_for(lock, std::chrono::milliseconds(200));
  }
}

std::vector<WorkerSlot*> Hub::Participants() {
  std::vector<WorkerSlot*> who;
  for (auto& s : slots_)
    if (s->state == WorkerSlot::State::kWaiting || s->state == WorkerSlot::State::kActive) who.push_back(s.get());
  return who;
}

void Hub::Assign(const std::vector<WorkerSlot*>& who) {
  const int64_t step = step_;
  const int64_t epoch = step / steps_per_epoch_;
  const int64_t position = (step % steps_per_epoch_) * global_batch_;
  const int total = static_cast<int>(std::min<int64_t>(global_batch_, train_samples_ - position));
  std::vector<BatchController::Member> members;
  for (auto* s : who) {
    const double share = config_.worker_batches.empty() ? 1.0 : config_.worker_batches[s->id % config_.worker_batches.size()];
    members.push_back({s->id, s->max_batch, share});
  }
  const std::vector<int> batches = controller_.Next(total, members);
  int64_t offset = position;
  bool changed = false;
  for (size_t i = 0; i < who.size(); ++i) {
    proto::Assignment& a = who[i]->assignment;
    a.set_step(step);
    a.set_epoch(epoch);
    a.set_offset(offset);
    a.set_batch(batches[i]);
    a.set_worker_id(who[i]->id);
    offset += batches[i];
    who[i]->inbox.Expect(step, batches[i]);
    changed = changed || batches[i] != who[i]->last_batch;
  }
  // The epoch's last step is shorter; its split says nothing about speeds.
  if (!changed || total < global_batch_) return;
  BatchChange change{step, {}};
  std::string text;
  for (size_t i = 0; i < who.size(); ++i) {
    WorkerSlot* s = who[i];
    const double t = controller_.ms_per_sample(s->id);
    char buf[160];
    std::snprintf(buf, sizeof buf, " %s %d->%d%s", s->name.c_str(), s->last_batch, batches[i],
                  t > 0 ? (" (" + std::to_string(static_cast<int>(t * 1000)) + " us/sample)").c_str() : "");
    text += buf;
    s->last_batch = batches[i];
    change.batches.emplace_back(s->name, batches[i]);
  }
  constexpr size_t kMaxBatchChanges = 1000;
  if (batch_changes_.size() < kMaxBatchChanges) batch_changes_.push_back(std::move(change));
  ++batch_change_count_;
  spdlog::info("step {}: batches{}", step + 1, text);
}

void Hub::SendState(WorkerSlot* slot) {
  // Weights, then optimizer slots, in one float sequence.
  const size_t p = model_->ParamCount();
  OptimizerState state = optimizer_->SaveState();
  std::vector<float> all(p + state.slots.size());
  model_->GetParams(all.data());
  std::copy(state.slots.begin(), state.slots.end(), all.begin() + p);
  state.slots.clear();
  const size_t chunks = wire::ChunkCount(all.size());
  proto::HubMessage m;
  for (size_t c = 0; c < chunks; ++c) {
    auto* s = m.mutable_state();
    const size_t begin = c * wire::kChunkFloats, n = std::min<size_t>(wire::kChunkFloats, all.size() - begin);
    s->set_step(step_);
    s->set_offset(begin);
    wire::PackFloats(all.data() + begin, n, s->mutable_values());
    if (c + 1 == chunks) {
      s->set_last(true);
      s->set_optimizer_state(state.Serialize());
    }
    if (!slot->Send(Serialize(m))) return;  // the stream notices that it broke
  }
}

void Hub::Broadcast(const std::vector<WorkerSlot*>& who, bool have_result) {
  // One plan and one set of result chunks, serialised once and sent to
  // every worker as the same bytes.
  proto::StepPlan plan;
  plan.set_step(step_);
  for (auto* s : who) *plan.add_assignments() = s->assignment;
  std::vector<SharedMessage> chunks;
  if (have_result) {
    const size_t p = model_->ParamCount();
    const size_t n_chunks = wire::ChunkCount(p);
    proto::HubMessage m;
    for (size_t c = 0; c < n_chunks; ++c) {
      auto* r = m.mutable_result();
      const size_t begin = c * wire::kChunkFloats, n = std::min<size_t>(wire::kChunkFloats, p - begin);
      r->set_step(average_step_);
      r->set_offset(begin);
      if (compression_ == Compression::kNone)
        wire::PackFloats(average() + begin, n, r->mutable_values());
      else
        r->set_packed(encoded_average_[c]);
      if (c + 1 == n_chunks) {
        r->set_last(true);
        r->set_mean_loss(last_loss_);
        *r->mutable_plan() = plan;
      }
      chunks.push_back(Serialize(m));
    }
  }
  const int64_t result_payload = !have_result ? 0
                                 : compression_ == Compression::kNone
                                     ? static_cast<int64_t>(model_->ParamCount() * sizeof(float))
                                     : static_cast<int64_t>(EncodedBytes(compression_, model_->ParamCount()));
  SharedMessage plan_alone;
  for (auto* s : who) {
    if (s->gets_state) {
      SendState(s);
      if (!plan_alone) {
        proto::HubMessage m;
        *m.mutable_plan() = plan;
        plan_alone = Serialize(m);
      }
      s->Send(plan_alone);
    } else {
      for (const auto& c : chunks)
        if (!s->Send(c)) break;
      result_bytes_out_ += result_payload;
    }
  }
}

double Hub::StepDeadlineSeconds(const std::vector<WorkerSlot*>& who) const {
  double d = config_.step_deadline_seconds > 0
                 ? config_.step_deadline_seconds
                 : std::max(config_.deadline_floor_seconds, config_.deadline_factor * step_seconds_ema_);
  // The full model has to travel first: give those steps a floor more.
  for (auto* s : who)
    if (s->gets_state) return d + config_.deadline_floor_seconds;
  return d;
}

void Hub::LeaveOut(WorkerSlot* s, double waited_seconds) {
  s->state = WorkerSlot::State::kLate;
  s->inbox.Discard();
  ++s->stats.steps_missed;
  // It took at least this long: the controller gives it less next time.
  controller_.Observe(s->id, s->assignment.batch(), 1e3 * waited_seconds, -1);
  char reason[128];
  std::snprintf(reason, sizeof reason, "missed the deadline of step %lld (%.1f s)",
                static_cast<long long>(step_ + 1), waited_seconds);
  spdlog::warn("worker {} ({}) {}; the step goes on without it", s->id, s->name, reason);
  proto::HubMessage m;
  m.mutable_left_out()->set_step(step_);
  m.mutable_left_out()->set_reason(reason);
  s->Send(Serialize(m));
}

bool Hub::WaitForGradients(std::unique_lock<std::mutex>& lock, const std::vector<WorkerSlot*>& who) {
  const auto deadline = broadcast_at_ + eval_pause_ +
                        std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(StepDeadlineSeconds(who)));
  for (;;) {
    bool all = true;
    for (auto* s : who) all = all && (s->state == WorkerSlot::State::kGone || s->inbox.complete());
    if (all) return true;
    if (StopWanted()) return false;
    const auto now = Clock::now();
    if (now >= deadline) {
      for (auto* s : who)
        if (s->state == WorkerSlot::State::kActive && !s->inbox.complete()) LeaveOut(s, Seconds(now - broadcast_at_));
      return true;
    }
    cv_.wait_until(lock, std::min(deadline, now + std::chrono::milliseconds(200)));
  }
}

int64_t Hub::Reduce(const std::vector<WorkerSlot*>& who, double* loss_sum) {
  // Weighted by batch: each inbox holds the mean over its batch, so
  // sum(b_i / B * g_i), B = sum(b_i), is the mean over all samples. Workers
  // are summed in id order, so the result does not depend on arrival order;
  // the first one writes, the others add: one pass over memory per worker.
  int64_t samples = 0;
  *loss_sum = 0;
  for (auto* s : who) {
    if (!s->inbox.complete()) continue;
    samples += s->inbox.batch();
    *loss_sum += s->inbox.loss_sum();
    ++s->stats.steps;
    s->stats.samples += s->inbox.batch();
    s->stats.compute_ms += s->inbox.compute_ms();
    controller_.Observe(s->id, s->inbox.batch(), s->inbox.compute_ms(),
                        s->gets_state ? -1.0 : 1e3 * Seconds(s->complete_at - broadcast_at_));
    if (s->inbox.has_digest() && s->inbox.digest() != digest_before_) {
      spdlog::warn("worker {} ({}): weight digest differs from the hub's at step {}; resyncing", s->id, s->name,
                   s->inbox.step());
      s->needs_resync = true;
    }
  }
  if (samples == 0) return 0;
  const size_t n = model_->ParamCount();
  float* out = average();
  bool first = true;
  for (auto* s : who) {
    if (!s->inbox.complete()) continue;
    const float w = static_cast<float>(s->inbox.batch()) / static_cast<float>(samples);
    const float* g = s->inbox.gradient().data();
    if (first) {
      for (size_t i = 0; i < n; ++i) out[i] = w * g[i];
      first = false;
    } else {
      for (size_t i = 0; i < n; ++i) out[i] += w * g[i];
    }
  }
  return samples;
}

void Hub::EvaluateEpoch(int64_t epoch) {
  const double cpu_start = ThreadCpuSeconds();
  const EvalResult r = Evaluate(*model_, *test_);
  eval_seconds_ += ThreadCpuSeconds() - cpu_start;
  EpochRecord e;
  e.epoch = epoch;
  e.step = step_;
  e.train_loss = epoch_samples_ ? epoch_loss_sum_ / epoch_samples_ : 0;
  e.test_loss = r.mean_loss;
  e.test_accuracy = r.accuracy;
  epochs_.push_back(e);
  epoch_loss_sum_ = 0;
  epoch_samples_ = 0;
  spdlog::info("epoch {} done at step {}: train loss {:.4f}, test loss {:.4f}, test accuracy {:.4f}", epoch, e.step,
               e.train_loss, e.test_loss, e.test_accuracy);
  if (r.mean_loss < best_test_loss_) {
    best_test_loss_ = r.mean_loss;
    epochs_without_improvement_ = 0;
  } else if (config_.patience > 0 && ++epochs_without_improvement_ >= config_.patience) {
    stop_reason_ = "early stop: test loss has not improved for " + std::to_string(config_.patience) + " epoch(s)";
  }
}

void Hub::SaveCheckpoint() {
  if (config_.checkpoint_dir.empty()) return;
  try {
    const std::string path = SaveTrainingCheckpoint(config_.checkpoint_dir, spec_text_, *model_, *optimizer_,
                                                    RunPosition{step_, step_ / steps_per_epoch_, config_.seed});
    spdlog::info("checkpoint {}", path);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());  // training goes on; the next checkpoint may succeed
  }
}

void Hub::SayGoodbye(const std::string& reason) {
  proto::HubMessage m;
  m.mutable_stop()->set_reason(reason);
  m.mutable_stop()->set_steps(step_);
  m.mutable_stop()->set_test_accuracy(epochs_.empty() ? -1.0 : epochs_.back().test_accuracy);
  const SharedMessage stop = Serialize(m);
  std::vector<WorkerSlot*> who;
  {
    std::lock_guard<std::mutex> lock(mu_);
    finished_ = true;
    for (auto& s : slots_)
      if (s->state != WorkerSlot::State::kGone) who.push_back(s.get());
  }
  for (auto* s : who) s->Send(stop);
}

void Hub::LogProgress(double loss, int64_t samples_since, double seconds, const std::vector<WorkerSlot*>& who) {
  std::string per_worker;
  for (auto* s : who) {
    if (!s->inbox.complete()) continue;
    char buf[96];
    std::snprintf(buf, sizeof buf, " %s:b%d/%.1fms", s->name.c_str(), s->inbox.batch(), s->inbox.compute_ms());
    per_worker += buf;
  }
  const int64_t step = step_;
  spdlog::info("step {}/{} epoch {} loss {:.4f} {:.0f} samples/s |{}", step, total_steps_, step / steps_per_epoch_ + 1,
               loss, samples_since / std::max(seconds, 1e-9), per_worker);
}

int Hub::Run() {
  spdlog::info("hub: model {} ({} parameters), dataset {} ({} train, {} test), global batch {}, {} steps; "
               "listening on {}:{}, waiting for {} worker(s)",
               spec_.name(), model_->ParamCount(), config_.dataset, train_samples_, test_->Size(), global_batch_,
               total_steps_, config_.bind, port_, config_.workers);
  std::unique_lock<std::mutex> lock(mu_);
  if (!WaitForWorkers(lock)) {
    lock.unlock();
    SayGoodbye("hub shutting down");
    WriteReport(0, 0);
    return 0;
  }
  const auto t_start = Clock::now();
  const double process_cpu_start = ProcessCpuSeconds();
  auto t_log = t_start;
  int64_t samples_at_log = 0;
  bool have_result = false;
  while (step_ < total_steps_ && stop_reason_.empty()) {
    if (StopWanted()) {
      stop_reason_ = "hub shutting down";
      break;
    }
    std::vector<WorkerSlot*> who = Participants();
    if (static_cast<int>(who.size()) < config_.min_workers) {
      if (who.empty()) have_result = false;  // whoever comes next starts from the full state
      WaitForMinWorkers(lock);
      continue;
    }
    Assign(who);
    // Decided under the lock, so a stream that breaks meanwhile cannot be
    // brought back to life by the broadcast.
    for (auto* s : who) {
      s->gets_state = s->state == WorkerSlot::State::kWaiting || s->needs_resync || !have_result;
      if (s->needs_resync) ++s->stats.resyncs;
      s->needs_resync = false;
      s->state = WorkerSlot::State::kActive;
    }
    // Workers send a digest only every digest_every steps; hash only then.
    if (step_ % config_.digest_every == 0)
      digest_before_ = DigestFloats(backend_.Data(model_->params()), model_->ParamCount());
    const double cpu_broadcast = ThreadCpuSeconds();
    const auto wall_broadcast = Clock::now();
    broadcast_at_ = wall_broadcast;
    lock.unlock();
    Broadcast(who, have_result);
    broadcast_seconds_ += ThreadCpuSeconds() - cpu_broadcast;
    wall_seconds_ += Seconds(Clock::now() - wall_broadcast);
    // The epoch just finished is evaluated while the workers compute the
    // next step: the master weights do not change until its gradients are in.
    eval_pause_ = Clock::duration::zero();
    if (have_result && step_ % steps_per_epoch_ == 0) {
      const auto eval_start = Clock::now();
      EvaluateEpoch(step_ / steps_per_epoch_);
      // Evaluating competes with workers on a shared machine; the deadline
      // is not theirs to pay for it.
      eval_pause_ = Clock::now() - eval_start;
    }
    lock.lock();
    if (!WaitForGradients(lock, who)) continue;
    const double cpu_reduce = ThreadCpuSeconds();
    const auto wall_reduce = Clock::now();
    double loss_sum = 0;
    const int64_t samples = Reduce(who, &loss_sum);
    {
      // Whole steps in which nobody waited for the full model or was left
      // out set the pace the adaptive deadline follows.
      bool steady = true;
      Clock::time_point last = broadcast_at_;
      for (auto* s : who) {
        steady = steady && !s->gets_state && s->inbox.complete();
        if (s->inbox.complete()) last = std::max(last, s->complete_at);
      }
      const double took = Seconds(last - broadcast_at_);
      if (steady) step_seconds_ema_ = step_seconds_ema_ > 0 ? 0.8 * step_seconds_ema_ + 0.2 * took : took;
    }
    if (samples == 0) {
      have_result = false;
      continue;  // everyone dropped out of this step: run it again
    }
    EncodeAverage();
    optimizer_->Step(model_->params(), model_->grads());
    average_step_ = step_;
    have_result = true;
    last_loss_ = loss_sum / samples;
    epoch_loss_sum_ += loss_sum;
    epoch_samples_ += samples;
    samples_total_ += samples;
    samples_at_log += samples;
    ++step_;
    reduce_seconds_ += ThreadCpuSeconds() - cpu_reduce;
    wall_seconds_ += Seconds(Clock::now() - wall_reduce);
    const auto now = Clock::now();
    if (Seconds(now - t_log) >= config_.log_every_seconds) {
      LogProgress(last_loss_, samples_at_log, Seconds(now - t_log), who);
      t_log = now;
      samples_at_log = 0;
    }
    if (config_.checkpoint_every > 0 && step_ % config_.checkpoint_every == 0) SaveCheckpoint();
    else if (step_ % steps_per_epoch_ == 0) SaveCheckpoint();
  }
  const double train_seconds = Seconds(Clock::now() - t_start);
  process_seconds_ = ProcessCpuSeconds() - process_cpu_start - eval_seconds_;
  lock.unlock();
  if (stop_reason_.empty()) stop_reason_ = "training complete";
  // Evaluate the final weights unless that epoch end was evaluated already.
  if (step_ > 0 && (epochs_.empty() || epochs_.back().step != step_))
    EvaluateEpoch((step_ + steps_per_epoch_ - 1) / steps_per_epoch_);
  spdlog::info("stopping: {}", stop_reason_);
  SayGoodbye(stop_reason_);
  SaveCheckpoint();
  WriteReport(train_seconds, samples_total_);
  return 0;
}

}  // namespace mt
