#include "hub/hub.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <numeric>

#include "core/checkpoint/checkpoint.h"
#include "core/cli/common_options.h"
#include "core/data/augment.h"
#include "core/model/model_spec.h"
#include "core/privacy/dp_accountant.h"
#include "core/privacy/dp_plan.h"
#include "core/train/run_plan.h"
#include "core/util/atomic_file.h"
#include "core/util/process_stats.h"
#include "hub/grpc/hub_service.h"
#include "hub/http/dashboard_server.h"
#include "hub/monitor/live_status.h"
#include "hub/monitor/run_json.h"
#include "hub/monitor/status_source.h"
#include "hub/report/event_file_sink.h"
#include "model_io/run_model.h"
#include "tls/server_credentials.h"

namespace mt {
namespace {

constexpr int kEvalBatch = 500;

using Clock = std::chrono::steady_clock;

// The global batch is the hub's to choose: nobody named it or its split,
// and the balanced policy sizes each worker's share from its speed.
bool BatchFollowsDevices(const HubConfig& c) {
  // A private run's noise is planned over its steps: they stay as planned.
  return c.global_batch == 0 && c.worker_batches.empty() &&
         c.batch_policy == BatchPolicy::kBalanced && c.workers > 1 && !c.dp.enabled();
}

// Devices whose speeds differ less than this keep 64 each: the batch
// changes where a device is markedly slower, not with timing noise.
constexpr double kFollowBelow = 0.8;

RunPlan PlanOf(const HubConfig& c, int64_t train_samples) {
  if (!c.worker_batches.empty() && static_cast<int>(c.worker_batches.size()) != c.workers)
    throw std::invalid_argument("--worker-batches needs one size per worker (" +
                                std::to_string(c.workers) + ")");
  const int64_t global_batch = c.global_batch_or_default();
  if (global_batch < c.workers)
    throw std::invalid_argument("global batch " + std::to_string(global_batch) +
                                " is smaller than the worker count");
  return RunPlan(train_samples, global_batch, c.epochs, c.max_steps);
}

}  // namespace

Hub::Hub(HubConfig config, HubEventSink* events) : config_(std::move(config)), events_(events) {
  if (config_.workers < 1) throw std::invalid_argument("--workers must be at least 1");
  if (config_.min_workers < 1 || config_.min_workers > config_.workers)
    throw std::invalid_argument("--min-workers must be between 1 and --workers (" +
                                std::to_string(config_.workers) + ")");
  if (config_.resume && config_.checkpoint_dir.empty())
    throw std::invalid_argument("--resume needs a checkpoint directory");
  if (!config_.checkpoint_dir.empty())
    EnsureWritableDirectory(config_.checkpoint_dir, "--checkpoint-dir");
  RunModel run = LoadRunModel(config_.model, config_.tuning);
  // The hub needs only the training set's size and classes; the workers
  // read the samples. An image folder is decoded here, once, for them.
  DataOptions read;
  const DatasetInfo train = cli::PeekTrainingSet(config_.dataset, config_.data, run.spec, &read);
  record_.skipped_images = train.skipped;
  const std::string fitted = FitOutputsToClasses(run, train.classes, train.class_names);
  if (!fitted.empty()) spdlog::info("{}", fitted);
  for (const std::string& warning : run.warnings) spdlog::warn("{}", warning);
  record_.model_warnings = run.warnings;
  record_.model_label = run.label;
  record_.class_names = train.class_names;
  spec_ = run.spec;
  // Workers are sent what auto became (StepMessages::FillJoinReply).
  const Augmentation augment =
      ResolveAugment(config_.data.augment, train.sample, train.image_folder);
  config_.data.augment = AugmentChoice{augment.flip, augment.crop_padding > 0};
  record_.augment = augment.ToString();
  plan_ = std::make_unique<RunPlan>(PlanOf(config_, static_cast<int64_t>(train.size)));
  if (config_.dp.enabled()) PlanPrivacy();
  master_ =
      std::make_unique<MasterModel>(spec_, config_.optimizer, static_cast<int>(config_.threads),
                                    config_.seed, kEvalBatch, run.frozen);
  // Every split the hub opens from here on is held to the model's classes
  // too (the training split already fitted them, or was refused for its shape).
  read.classes = master_->model().num_classes();
  test_ = LoadDataset(config_.dataset, Split::kTest, read);
  if (run.initial && !config_.resume) {
    SetWeights(master_->model(), *run.initial);
    spdlog::info("initial weights from {}", run.initial_origin);
  }
  // Batch norm's statistics are recomputed on the hub from training samples
  // (core/train/recalibrate.h), so only a model with them loads the set here.
  if (master_->model().RunningStatCount() > 0)
    calibration_ = LoadDataset(config_.dataset, Split::kTrain, read);
  if (!run.frozen.empty()) {
    const size_t exchanged = master_->param_count() - master_->exchanged_begin();
    spdlog::info("frozen: {} layer(s); {} of {} parameters travel each step", run.frozen.size(),
                 exchanged, master_->param_count());
  }
  if (!config_.events_path.empty()) {
    event_file_ = std::make_unique<EventFileSink>(config_.events_path, events_);
    events_ = event_file_.get();
  }
  live_ = std::make_unique<LiveStatus>(events_);
  events_ = live_.get();
  encoder_ = std::make_unique<GrpcEncoder>();
  coordinator_ = std::make_unique<StepCoordinator>(config_, spec_, *plan_, *master_, *encoder_,
                                                   metrics_, events_);
  if (config_.data.partition.kind != PartitionSpec::Kind::kIid) SplitAmongWorkers(read);
  if (!config_.trace_path.empty()) {
    std::vector<std::string> layers;
    for (const auto& layer : master_->model().layers()) layers.push_back(layer->name());
    trace_ = std::make_unique<HubTrace>(config_.trace_path, std::move(layers));
    coordinator_->set_trace(trace_.get());
  }
  if (config_.resume) ResumeFromCheckpoint();
  PublishRunningStats();
  live_->SetRun(LiveRunInfo());  // once a resumed run knows its first step
}

Hub::~Hub() = default;

void Hub::PlanPrivacy() {
  DpSettings& dp = config_.dp;
  // Error feedback would send what clipping left out in later rounds, past
  // the bound: private runs exchange plain floats.
  if (config_.compression.value_or(Compression::kNone) != Compression::kNone)
    throw std::invalid_argument(
        "differential privacy exchanges updates uncompressed (--compress "
        "none or auto)");
  config_.compression = Compression::kNone;
  // The noise is scaled to each worker's weight in a weighted mean; auto's
  // centred clipping and the coordinate-wise rules combine otherwise.
  if (config_.aggregate == Aggregation::kTrimmedMean || config_.aggregate == Aggregation::kMedian)
    throw std::invalid_argument(
        "differential privacy combines updates by their mean (--aggregate "
        "auto or mean)");
  config_.aggregate = Aggregation::kMean;
  const int64_t rounds =
      dp::PlannedRounds(*plan_, config_.local_sgd.sync_every,
                        config_.checkpoint_dir.empty() ? 0 : config_.checkpoint_every);
  dp::SolveNoise(dp, rounds);
  spdlog::info(
      "differential privacy: updates clipped to {:.4g}, noise multiplier {:.4g} added by the {}; "
      "epsilon {:.4g} at delta {:.2g} after at most {} rounds{}",
      dp.clip, dp.noise_multiplier, dp.noise_at == DpNoiseAt::kHub ? "hub (central)" : "workers",
      dp::Epsilon(1, dp.noise_multiplier, rounds, dp.delta), dp.delta, rounds,
      dp.noise_at == DpNoiseAt::kHub ? "; the hub itself sees clipped updates without noise" : "");
}

void Hub::SplitAmongWorkers(const DataOptions& read) {
  // The labels only: the samples stay with the workers.
  std::unique_ptr<Dataset> loaded;
  const Dataset* train = calibration_.get();
  if (!train) train = (loaded = LoadDataset(config_.dataset, Split::kTrain, read)).get();
  std::vector<ClassShare> shares =
      DrawPartition(DatasetLabels(*train), train->NumClasses(), config_.workers,
                    config_.data.partition, config_.seed);
  std::string sizes;
  for (size_t k = 0; k < shares.size(); ++k) {
    record_.partition_counts.push_back(shares[k].count);
    sizes +=
        (k ? ", share " : "share ") + std::to_string(k) + ": " + std::to_string(shares[k].total());
  }
  // Workers are numbered by the hub ("worker 0 joined: NAME"), from 0; a
  // --name such as local-cluster's worker1 is only a label.
  spdlog::info(
      "--partition {}: worker k (the number in \"worker k joined\", not its --name) trains on "
      "share k mod {} alone; samples: {}",
      config_.data.partition.ToString(), shares.size(), sizes);
  coordinator_->SetPartition(std::move(shares));
}

void Hub::ResumeFromCheckpoint() {
  const ResumePoint point = NewestValidCheckpoint(config_.checkpoint_dir);
  if (point.path.empty()) {
    spdlog::info("--resume: no checkpoint in {} yet; starting from scratch",
                 config_.checkpoint_dir);
    return;
  }
  for (const std::string& why : point.skipped)
    spdlog::warn("--resume: passing over {}; using the older {}", why, point.path);
  const std::string& latest = point.path;
  const Checkpoint& ck = point.checkpoint;
  if (ck.model_spec != master_->spec_text())
    throw std::runtime_error("checkpoint " + latest + " is for a different model than --model " +
                             config_.model);
  if (ck.global_batch > 0 && ck.global_batch != plan_->batch()) {
    // Its steps were counted in another batch: a run that chose its batch
    // itself goes on with that one; one told a batch cannot.
    if (!BatchFollowsDevices(config_))
      throw std::runtime_error(
          fmt::format("checkpoint {} counts steps of {} samples, but this run's global batch is "
                      "{} (resume with --global-batch {})",
                      latest, ck.global_batch, plan_->batch(), ck.global_batch));
    record_.default_batch = plan_->batch();
    coordinator_->SetGlobalBatch(ck.global_batch);
  }
  plan_->CheckResumable(ck.step, latest);
  master_->Restore(ck, latest);
  if (ck.seed != config_.seed)
    spdlog::warn(
        "--seed {} differs from the checkpoint's {}; keeping the checkpoint's so the data order "
        "continues",
        config_.seed, ck.seed);
  config_.seed = ck.seed;
  coordinator_->StartAt(ck.step);
  record_.resumed_from = ck.step;
  spdlog::info("resumed from {} at step {} (epoch {})", latest, ck.step,
               plan_->EpochOf(ck.step) + 1);
}

void Hub::Start() {
  const tls::ServerSecurity security = tls::MakeServerSecurity(config_.tls);
  server_ = std::make_unique<HubServer>(
      *coordinator_, config_.bind, config_.port, security.credentials, &metrics_.write_cpu_ns,
      std::chrono::milliseconds(static_cast<int64_t>(1000 * config_.hello_timeout_seconds)),
      config_.max_workers_or_default());
  record_.tls_fingerprint = security.fingerprint;
  spdlog::info("hub: {}", security.Describe());
  StartDashboard();
}

int Hub::port() const { return server_ ? server_->port() : 0; }

void Hub::RequestStop() { coordinator_->RequestStop(); }

std::vector<float> Hub::Weights() const { return coordinator_->MasterWeights(); }

int64_t Hub::steps_done() const { return coordinator_->steps_done(); }

int Hub::Run() {
  const trace::ScopedTrack run_row(trace::kTrackRun);
  spdlog::info(
      "hub: model {} ({} parameters), dataset {} ({} train, {} test), global batch {}, {} steps; "
      "listening on {}:{}, waiting for {} worker(s)",
      spec_.name(), master_->param_count(), config_.dataset, plan_->train_samples(), test_->Size(),
      plan_->batch(), plan_->total_steps(), config_.bind, port(), config_.workers);
  exchange_ = std::make_unique<HubExchange>(*coordinator_, config_);
  loop_ =
      std::make_unique<TrainingLoop>(*plan_, config_, *exchange_, static_cast<RunHooks&>(*this));
  if (coordinator_->steps_done() >= plan_->total_steps()) {
    // Resumed from the checkpoint a finished run wrote last: there is
    // nothing to train, and waiting for workers would wait forever.
    spdlog::info("the run is already complete at step {}; nothing to train",
                 coordinator_->steps_done());
    loop_->EndWithoutTraining("training complete");
    coordinator_->Finish(loop_->stop_reason(), -1);
    WriteReport();
    return 0;
  }
  if (!coordinator_->WaitForWorkers()) {
    loop_->EndWithoutTraining("hub shutting down");
    coordinator_->Finish(loop_->stop_reason(), -1);
    WriteReport();
    return 0;
  }
  if (record_.resumed_from < 0 && BatchFollowsDevices(config_)) FollowDevices();
  train_start_.wall = Clock::now();
  train_start_.process_cpu_seconds = ProcessCpuSeconds();
  loop_->Run();
  if (const std::string written = record_.checkpoints.Summary(); !written.empty())
    spdlog::info("{}", written);
  if (!loop_->failed()) SaveFinal();
  WriteReport();
  if (trace_) trace_->Write();
  if (!record_.final_model_path.empty()) spdlog::info("final model: {}", record_.final_model_path);
  return loop_->failed() ? 1 : 0;
}

void Hub::FollowDevices() {
  constexpr int kPerWorker = HubConfig::kBatchPerWorker;
  std::string timings;
  const int batch = coordinator_->FollowingBatch(kPerWorker, &timings);
  const int64_t planned = plan_->batch();
  if (batch <= 0) {
    spdlog::info("global batch {}: not every worker timed itself, or no speed is claimed by two",
                 planned);
    return;
  }
  if (batch >= kFollowBelow * static_cast<double>(planned)) return;
  record_.default_batch = planned;
  coordinator_->SetGlobalBatch(batch);
  std::string lr;
  if (config_.optimizer.lr_from_batch) {
    // The workers take it with the full state of their first step.
    master_->set_lr(DefaultLearningRate(config_.optimizer.kind, batch));
    lr = fmt::format(", learning rate {:.4g}", master_->optimizer().lr());
  }
  spdlog::info(
      "global batch {} instead of {}: the fastest workers (a speed two of them claim) take {} a "
      "step and the others what they compute meanwhile ({} per sample){}",
      batch, planned, kPerWorker, timings, lr);
  if (events_)
    events_->OnEvent({HubEvent::Kind::kGlobalBatchChanged,
                      coordinator_->steps_done(),
                      -1,
                      std::to_string(planned) + "->" + std::to_string(batch),
                      {}});
  live_->SetRun(LiveRunInfo());
}

void Hub::SaveFinal() {
  RecalibrateRunningStats(coordinator_->steps_done());
  const std::string state_dir =
      config_.tls.state_dir.empty() ? tls::DefaultStateDir() : config_.tls.state_dir;
  const std::string path =
      FinalModelPath(config_.export_path, config_.checkpoint_dir, state_dir, record_.model_label);
  RunSummary run;  // what the model file keeps of the run
  run.mode = "hub";
  run.dataset = config_.dataset;
  run.optimizer = master_->optimizer().Kind();
  run.lr = master_->optimizer().config().lr;
  run.seed = config_.seed;
  loop_->FillSummary(run);
  run.details["augment"] = record_.augment;
  // What the model's weights have spent of their training data's privacy.
  if (const std::optional<PrivacyStatus> privacy = TakeSnapshot(*coordinator_, *live_).privacy)
    run.details["differential_privacy"] = PrivacyJson(*privacy);
  try {
    SaveFinalModel(path, spec_, master_->model(), {{"mt.training", run.ModelNote()}});
    record_.final_model_path = path;
  } catch (const std::exception& e) {
    // The run itself succeeded; its checkpoint (if any) still holds the weights.
    spdlog::error("could not write the final model to {}: {}", path, e.what());
  }
}

void Hub::SaveCheckpoint(int64_t step) {
  if (config_.checkpoint_dir.empty()) return;
  const trace::ScopedSpan span(TraceSpans(), trace::SpanKind::kCheckpoint, -1, step);
  RecalibrateRunningStats(step);
  try {
    const std::string path = master_->SaveCheckpoint(
        config_.checkpoint_dir, step, plan_->EpochOf(step), config_.seed, plan_->batch());
    const CheckpointLog::Line line = record_.checkpoints.Written(step, path, Clock::now());
    spdlog::log(line.info ? spdlog::level::info : spdlog::level::debug, "{}", line.text);
    if (events_) events_->OnEvent({HubEvent::Kind::kCheckpointSaved, step, -1, path, {}});
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());  // training goes on; the next checkpoint may succeed
  }
}

}  // namespace mt
