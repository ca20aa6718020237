// mtworker --hub: join, receive the model, then for each step compute the
// gradient on the assigned samples, send it, and apply the hub's average
// with the same optimizer code the hub runs on its master copy.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

#include "core/data/dataset.h"
#include "core/optim/optimizer.h"
#include "core/optim/optimizer_proto.h"
#include "core/train/run_summary.h"
#include "core/util/process_stats.h"
#include "proto/wire.h"
#include "worker/compute_devices.h"
#include "worker/compute_probe.h"
#include "worker/hub_connection.h"
#include "worker/hub_session.h"
#include "worker/join_reply_check.h"
#include "worker/local_trainer.h"
#include "worker/worker_config.h"
#include "worker/worker_control.h"
#include "worker/worker_trace.h"

namespace mt {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

proto::ComputeDevice WireDevice(DeviceChoice choice) {
  switch (choice) {
    case DeviceChoice::kOpenCl: return proto::DEVICE_OPENCL;
    case DeviceChoice::kAuto: return proto::DEVICE_AUTO;
    case DeviceChoice::kCpu: break;
  }
  return proto::DEVICE_CPU;
}

std::string HostName() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "worker";
  return buf;
}

// The trainer for this Join: the one kept from an earlier session when it
// serves the hub's settings as they are, else a new one.
LocalTrainer& TrainerFor(const WorkerConfig& cfg, const proto::JoinReply& join,
                         ComputeDevices& devices, std::unique_ptr<LocalTrainer>& kept) {
  CheckJoinReply(join);
  if (cfg.data_dir.empty())
    CheckHubDataset(join.dataset(), cfg.allowed_data_dirs.empty()
                                        ? SplitDirList(std::getenv("MT_ALLOW_DATA"))
                                        : cfg.allowed_data_dirs);
  TrainerSpec spec;
  spec.model = join.model();
  spec.dataset = cfg.data_dir.empty() ? join.dataset() : cfg.data_dir;
  spec.optimizer = FromProto(join.optimizer());
  spec.capacity = std::max(1, join.max_batch() > 0 ? std::min(join.max_batch(), join.global_batch())
                                                   : join.global_batch());
  spec.seed = join.seed();
  spec.memory_budget_bytes = cfg.memory_budget_bytes;
  spec.recompute = cfg.recompute;
  spec.activation_precision = cfg.activation_precision;
  spec.frozen.assign(join.frozen_layers().begin(), join.frozen_layers().end());
  // Read as the hub reads, whether its dataset or this worker's --data.
  spec.data.test_fraction = join.data().test_fraction();
  spec.data.skip_bad_images = join.data().skip_bad_images();
  spec.data.augment = AugmentChoice{join.data().augment_flip(), join.data().augment_crop()};
  if (!kept || !kept->Serves(spec)) {
    if (kept) spdlog::info("the hub's model, data or optimizer changed: building the trainer anew");
    kept.reset();  // the old one's memory goes before the new one's comes
    kept = std::make_unique<LocalTrainer>(devices, spec);
  }
  Model& model = kept->model();
  if (model.ParamCount() != join.param_count())
    throw std::runtime_error("model from the hub has " + std::to_string(model.ParamCount()) +
                             " parameters here but " + std::to_string(join.param_count()) +
                             " at the hub");
  if (static_cast<size_t>(join.running_stats_size()) != model.RunningStatCount())
    throw std::runtime_error("hub sent " + std::to_string(join.running_stats_size()) +
                             " running statistics for a model with " +
                             std::to_string(model.RunningStatCount()));
  for (float v : join.running_stats())
    if (!std::isfinite(v))
      throw std::runtime_error("hub sent running statistics that are not finite");
  model.SetRunningStats(join.running_stats().data());
  return *kept;
}

RunSummary Summarize(const WorkerConfig& cfg, const LocalTrainer& trainer,
                     const ComputeDevices& devices, const WorkerTotals& totals) {
  RunSummary r;
  r.mode = "worker";
  r.model = trainer.model_name();
  r.dataset = trainer.dataset();
  r.device = DeviceLabel(trainer.model());
  r.placement = trainer.model().PlacementSummary();
  r.threads = cfg.threads;
  // As the hub's state set them, which may differ from its Join (a global
  // batch that followed the devices carries its own rate).
  r.optimizer = trainer.optimizer().Kind();
  r.lr = trainer.optimizer().lr();
  r.parameters = static_cast<int64_t>(trainer.model().ParamCount());
  r.steps = totals.steps;
  r.samples = totals.samples;
  r.train_seconds = totals.compute_seconds;
  r.test_accuracy = totals.hub_accuracy;
  r.last_step_loss = totals.last_mean_loss;
  r.details["hub"] = cfg.hub;
  r.details["opencl_device"] = devices.opencl_name();
  r.details["local_data"] = !cfg.data_dir.empty();
  r.details["mean_compute_ms"] =
      totals.steps ? 1e3 * totals.compute_seconds / static_cast<double>(totals.steps) : 0.0;
  r.details["resyncs"] = totals.resyncs;
  r.details["steps_left_out"] = totals.steps_left_out;
  r.details["steps_ahead"] = totals.steps_ahead;
  r.details["reconnects"] = totals.reconnects;
  r.details["slowdown"] = cfg.slowdown;
  r.details["max_batch"] = trainer.capacity();
  r.details["recompute"] = trainer.recomputes();
  r.details["recompute_for_budget"] = trainer.recomputes_for_budget();
  r.details["activation_precision"] =
      ActivationPrecisionName(trainer.model().activation_precision());
  r.details["history"] = totals.history.ToJson();
  if (!totals.share_classes.empty()) r.details["partition_share"] = totals.share_classes;
  if (const TrainingProfiler* profiler = trainer.profiler()) profiler->AddTo(r.details);
  return r;
}

}  // namespace

int RunWorker(const WorkerConfig& cfg, WorkerControl& control, const HubLinkDecorator& decorate) {
  control.SetState(WorkerState::kStarting);
  ComputeDevices devices(cfg.device, static_cast<int>(cfg.threads));
  const int64_t rss_before_model = ReadResidentMemory().current_bytes;  // for --profile
  std::unique_ptr<EventFile> events;
  if (!cfg.events_path.empty()) events = std::make_unique<EventFile>(cfg.events_path);
  HubConnection hub(cfg.hub, cfg.tls, events.get());
  proto::JoinRequest request;
  request.set_protocol_version(wire::kProtocolVersion);
  request.set_token(cfg.token);
  request.set_secure_aggregation(true);  // this build can mask its updates
  auto* d = request.mutable_device();
  d->set_name(cfg.name.empty() ? HostName() : cfg.name);
  d->set_cores(static_cast<int32_t>(std::thread::hardware_concurrency()));
  d->set_device(WireDevice(devices.choice()));
  d->set_opencl_device(devices.opencl_name());
  d->set_threads(static_cast<int32_t>(cfg.threads));
  d->set_memory_budget_bytes(cfg.memory_budget_bytes);
  // Before the trainer, which records into it, and written by its
  // destructor if the run ends on an error.
  WorkerTrace timeline(cfg.trace_path, d->name());

  WorkerTotals totals;
  std::unique_ptr<LocalTrainer> trainer;
  auto write_report = [&](const std::string& reason) {
    if (cfg.report_path.empty() || !trainer) return;
    if (const TrainingProfiler* profiler = trainer->profiler())
      spdlog::info("--profile:\n{}", profiler->Table());
    RunSummary r = Summarize(cfg, *trainer, devices, totals);
    r.stop_reason = reason;
    r.Write(cfg.report_path);
  };
  auto finish = [&](const std::string& reason) {
    if (events) events->Write("finished", {{"reason", reason}});
    timeline.Write();
    write_report(reason);
    control.Finish(reason);
    return 0;
  };
  auto stop = [&] { return control.stop_requested(); };
  // Between sessions: 0.5 s, doubling to 8 s, back to 0.5 s after a session
  // that trained a while, so a flapping link does not hammer the hub.
  double backoff_s = 0.5;
  // Sessions in a row that ended on a hub message refused (HubProtocolError).
  constexpr int kMaxBadSessions = 3;
  int bad_sessions = 0;
  // Timed once, before the first session's first step: the hub sizes the
  // global batch from it then, and a reconnect tells it again.
  double ms_per_sample = -1;
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
    } catch (const std::exception& e) {
      write_report(e.what());
      throw;
    }
    spdlog::info("joined as worker {}: model {}, dataset {}{}", join.worker_id(),
                 join.model().name(),
                 cfg.data_dir.empty() ? join.dataset() : cfg.data_dir + " (local)",
                 join.compression() == proto::COMPRESSION_NONE
                     ? ""
                     : ", gradients " + proto::Compression_Name(join.compression()));

    LocalTrainer* built = nullptr;
    try {
      built = &TrainerFor(cfg, join, devices, trainer);
    } catch (const std::exception& e) {
      // What the hub asks cannot be done here (a dataset not allowed, a
      // model too big): say so to the hub, which would otherwise wait for
      // this worker's stream, and stop; joining again would only repeat it.
      hub.Leave(join.worker_id(), cfg.token, join.session_secret(), e.what());
      write_report(e.what());
      throw;
    }
    LocalTrainer& local = *built;
    if (ms_per_sample < 0) {
      ms_per_sample = TimeComputePerSample(local, PacerFor(cfg), kProbeBatch);
      spdlog::info("compute: {:.4f} ms per sample", ms_per_sample);
    }
    // Spans go to the own --trace file and, when this hub asks, to the hub.
    timeline.SetSending(join.trace());
    timeline.NameLayers(local.model());
    WorkerTrace* tracing = timeline.active() ? &timeline : nullptr;
    local.set_trace(tracing);
    if (cfg.profile && !local.profiler()) {
      ProfileSetup setup;
      setup.threads = static_cast<int>(cfg.threads);
      setup.baseline_rss_bytes = rss_before_model;
      setup.data_bytes = HeldDatasetBytes(local.data());
      local.EnableProfiling(setup);
    }
    const std::unique_ptr<GrpcHubLink> call = hub.OpenTrain();
    control.AttachCall([c = call.get()] { c->Cancel(); },
                       [&hub, &cfg, id = join.worker_id(),
                        secret = join.session_secret()](const std::string& reason) {
                         hub.Leave(id, cfg.token, secret, reason);
                       });
    const std::unique_ptr<HubLink> decorated = decorate ? decorate(*call, join) : nullptr;
    HubLink& link = decorated ? *decorated : *call;
    if (events) events->Write("joined", {{"worker", join.worker_id()}, {"hub", hub.target()}});
    HubSession loop(cfg, join, link, local, totals, control, events.get());
    loop.set_trace(tracing);
    proto::WorkerMessage hello;
    hello.mutable_hello()->set_worker_id(join.worker_id());
    hello.mutable_hello()->set_token(cfg.token);
    hello.mutable_hello()->set_session_secret(join.session_secret());
    hello.mutable_hello()->set_placement(local.model().PlacementSummary());
    hello.mutable_hello()->set_compute_ms_per_sample(ms_per_sample);
    hello.mutable_hello()->set_secagg_box_key(loop.secagg_box_key());
    link.Send(hello);

    const auto started = Clock::now();
    HubSession::Outcome outcome = HubSession::Outcome::kBroken;
    std::string refused;  // why a hub message was refused, if one was
    try {
      outcome = loop.Run();
    } catch (const HubProtocolError& e) {
      refused = e.what();
      call->Cancel();  // the stream is in no state to be read to its end
    }
    if (outcome == HubSession::Outcome::kLeave) {
      control.SetState(WorkerState::kStopping);
      spdlog::info("leaving the run: {}", loop.leave_reason());
      if (!control.hub_told())
        hub.Leave(join.worker_id(), cfg.token, join.session_secret(), loop.leave_reason());
      call->Cancel();
    } else if (refused.empty()) {
      link.CloseSending();
      // Whatever the hub still had queued: the call cannot finish while a
      // message it sent lies unread.
      proto::HubMessage ignored;
      while (outcome == HubSession::Outcome::kGoodbye && link.Read(&ignored)) {
      }
    }
    const std::string call_error = call->Finish();
    control.DetachCall();
    if (outcome == HubSession::Outcome::kGoodbye) return finish("the hub ended the run");
    if (outcome == HubSession::Outcome::kLeave) return finish(loop.leave_reason());
    if (Seconds(Clock::now() - started) > 30) backoff_s = 0.5;
    // A hub that keeps sending what this worker refuses is broken or
    // hostile: a few tries, then stop rather than rejoin for ever.
    bad_sessions = refused.empty() ? 0 : bad_sessions + 1;
    if (!refused.empty()) {
      if (events) events->Write("hub_message_refused", {{"reason", refused}});
      if (bad_sessions >= kMaxBadSessions) {
        const std::string why =
            "the hub at " + hub.target() + " sent messages this worker refuses in " +
            std::to_string(bad_sessions) + " sessions in a row; the last: " + refused;
        write_report(why);
        throw std::runtime_error(why);
      }
    }
    control.SetState(WorkerState::kReconnecting);
    if (events)
      events->Write("hub_lost", {{"reason", call_error.empty() ? "stream closed" : call_error}});
    spdlog::warn("lost the hub at {}: {}; joining again in {:.1f} s", hub.target(),
                 !refused.empty()     ? refused
                 : call_error.empty() ? "stream closed without a goodbye"
                                      : call_error,
                 backoff_s);
    for (auto until = Clock::now() + std::chrono::duration<double>(backoff_s);
         Clock::now() < until && !stop();)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (stop()) return finish(control.stop_request_reason());
    backoff_s = std::min(2 * backoff_s, 8.0);
    ++totals.reconnects;
  }
}

}  // namespace mt
