#include "worker/standalone_trainer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "core/checkpoint/checkpoint.h"
#include "core/checkpoint/training_checkpoint.h"
#include "core/data/dataset.h"
#include "core/data/sampler.h"
#include "core/model/model_spec.h"
#include "core/trace/span.h"
#include "core/train/evaluate.h"
#include "core/train/progress.h"
#include "core/train/run_plan.h"
#include "core/train/run_summary.h"
#include "core/train/step_history.h"
#include "core/util/atomic_file.h"
#include "core/util/process_stats.h"
#include "model_io/run_model.h"
#include "tls/tls_options.h"
#include "worker/compute_devices.h"
#include "worker/local_trainer.h"
#include "worker/worker_trace.h"

namespace mt {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Continues from the newest checkpoint in the run's directory, if any;
// returns its step, or -1 when starting afresh.
int64_t Resume(const StandaloneConfig& cfg, const RunPlan& plan, const std::string& spec_text,
               LocalTrainer& t) {
  const ResumePoint point = NewestValidCheckpoint(cfg.checkpoint_dir);
  if (point.path.empty()) {
    spdlog::info("no checkpoint in {}: starting from scratch", cfg.checkpoint_dir);
    return -1;
  }
  for (const std::string& why : point.skipped)
    spdlog::warn("--resume: passing over {}; using the older {}", why, point.path);
  const std::string& latest = point.path;
  const Checkpoint& ck = point.checkpoint;
  if (ck.model_spec != spec_text)
    throw std::runtime_error("checkpoint " + latest + " is for a different model than --model " +
                             cfg.model);
  if (ck.weights.size() != t.model().ParamCount())
    throw std::runtime_error("checkpoint " + latest + ": weight count does not match the model");
  plan.CheckResumable(ck.step, latest);
  t.model().SetParams(ck.weights.data());
  if (ck.running_stats.size() == t.model().RunningStatCount())
    t.model().SetRunningStats(ck.running_stats.data());
  t.optimizer().LoadState(ck.optimizer);
  spdlog::info("resumed from {} at step {}", latest, ck.step);
  return ck.step;
}

}  // namespace

int RunStandalone(const StandaloneConfig& cfg, const std::atomic<bool>* stop) {
  // The device first: a --device this machine cannot honour fails at once.
  ComputeDevices devices(cfg.device, static_cast<int>(cfg.threads));
  const int64_t rss_before_model = ReadResidentMemory().current_bytes;  // for --profile
  if (!cfg.checkpoint_dir.empty()) EnsureWritableDirectory(cfg.checkpoint_dir, "--checkpoint-dir");
  // --trace: checked now, written at the end (or by its destructor on an error).
  WorkerTrace timeline(cfg.trace_path, "mtworker --standalone");
  const RunModel run = LoadRunModel(cfg.model, cfg.tuning);
  const proto::ModelSpec& spec = run.spec;
  const std::string spec_text = ModelSpecToText(spec);
  const int batch = static_cast<int>(cfg.batch);
  TrainerSpec trainer_spec{spec, cfg.dataset, cfg.optimizer, batch, cfg.seed};
  trainer_spec.frozen = run.frozen;
  LocalTrainer trainer(devices, trainer_spec);
  const auto test = LoadDataset(cfg.dataset, Split::kTest);
  CheckDataFitsModel(trainer.model(), *test, cfg.dataset);
  Model& model = trainer.model();
  const RunPlan plan(static_cast<int64_t>(trainer.data().Size()), batch, cfg.epochs, cfg.max_steps);
  WorkerTrace* tracing = timeline.active() ? &timeline : nullptr;
  if (tracing) {
    timeline.NameLayers(model);
    trainer.set_trace(tracing);
  }
  if (cfg.profile) {
    ProfileSetup setup;
    setup.threads = static_cast<int>(cfg.threads);
    setup.baseline_rss_bytes = rss_before_model;
    setup.data_bytes = HeldDatasetBytes(trainer.data()) + HeldDatasetBytes(*test);
    trainer.EnableProfiling(setup);
  }

  RunSummary summary;
  summary.mode = "standalone";
  summary.model = spec.name();
  summary.dataset = cfg.dataset;
  summary.device = DeviceLabel(model);
  summary.placement = model.PlacementSummary();
  summary.threads = cfg.threads;
  summary.optimizer = cfg.optimizer.kind;
  summary.lr = cfg.optimizer.lr;
  summary.seed = cfg.seed;
  summary.parameters = static_cast<int64_t>(model.ParamCount());
  summary.details["batch"] = cfg.batch;
  summary.details["opencl_device"] = devices.opencl_name();

  summary.details["frozen_layers"] = run.frozen;
  size_t trained = 0;
  for (const auto& [begin, end] : model.TrainedRanges()) trained += end - begin;
  summary.details["trained_parameters"] = trained;

  int64_t step = 0;
  if (cfg.resume) {
    summary.resumed_from_step = step = std::max<int64_t>(0, Resume(cfg, plan, spec_text, trainer));
  } else if (run.initial) {
    SetWeights(model, *run.initial);
    summary.details["initial_weights"] = run.initial_origin;
    spdlog::info("initial weights from {}", run.initial_origin);
  }
  if (!run.frozen.empty())
    spdlog::info("frozen: {} layer(s); {} of {} parameters train", run.frozen.size(), trained,
                 model.ParamCount());

  spdlog::info(
      "standalone: model {} ({} parameters), dataset {} ({} train, {} test), batch {}, {} steps in "
      "{} "
      "epoch(s), device {}, {} thread(s), {} lr {}; memory {} KiB at this batch, {} KiB per extra "
      "sample",
      spec.name(), model.ParamCount(), cfg.dataset, plan.train_samples(), test->Size(), batch,
      plan.total_steps(), plan.epochs(), summary.device, cfg.threads, trainer.optimizer().Kind(),
      cfg.optimizer.lr, model.MemoryBytes(batch) / 1024,
      (model.MemoryBytes(2) - model.MemoryBytes(1)) / 1024);

  auto save = [&](int64_t at_step) {
    if (cfg.checkpoint_dir.empty()) return;
    const trace::ScopedSpan span(tracing, trace::SpanKind::kCheckpoint, -1, at_step);
    const std::string path =
        SaveTrainingCheckpoint(cfg.checkpoint_dir, spec_text, model, trainer.optimizer(),
                               RunPosition{at_step, plan.EpochOf(at_step), cfg.seed});
    spdlog::info("checkpoint {}", path);
  };
  auto stop_wanted = [&] { return stop && stop->load(); };

  ProgressMeter progress(cfg.log_every_seconds, plan.total_steps(), step);
  StepHistory history;
  const auto started = Clock::now();
  std::vector<uint32_t> order;
  int64_t order_epoch = -1;
  EpochSummary current;
  double loss_sum = 0;
  auto t_epoch = Clock::now();
  auto evaluate = [&](bool complete) {
    const trace::ScopedSpan span(tracing, trace::SpanKind::kEvaluation, -1, step);
    current.epoch = plan.EpochOf(step - 1) + 1;
    current.step = step;
    current.complete = complete;
    current.train_seconds = Seconds(Clock::now() - t_epoch);
    current.train_loss = current.samples ? loss_sum / static_cast<double>(current.samples) : 0;
    const EvalResult r = Evaluate(model, *test);
    current.test_loss = r.mean_loss;
    current.test_accuracy = r.accuracy;
    summary.train_seconds += current.train_seconds;
    summary.epochs.push_back(current);
    spdlog::info(
        "epoch {} {} at step {}: train loss {:.4f}, test loss {:.4f}, test accuracy {:.4f}, {:.0f} "
        "samples/s",
        current.epoch, complete ? "done" : "stopped part way", step, current.train_loss,
        r.mean_loss, r.accuracy,
        static_cast<double>(current.samples) / std::max(current.train_seconds, 1e-9));
    current = EpochSummary{};
    loss_sum = 0;
    t_epoch = Clock::now();
  };

  while (step < plan.total_steps()) {
    const int64_t epoch = plan.EpochOf(step);
    if (order_epoch != epoch) {
      order = EpochOrder(static_cast<size_t>(plan.train_samples()), cfg.seed, epoch);
      order_epoch = epoch;
    }
    const int64_t first = plan.FirstSample(step);
    const int count = plan.BatchAt(step);
    if (tracing) tracing->SetStep(step);
    const int64_t step_begin = tracing ? trace::NowMicros() : 0;
    const auto step_started = Clock::now();
    const double loss =
        trainer.ComputeGradients(order.data() + first, count, DropoutSeed(cfg.seed, step, first));
    trainer.ApplyGradients();
    if (tracing)
      tracing->Add(
          trace::MakeSpan(trace::SpanKind::kStep, step_begin, trace::NowMicros(), -1, step));
    if (!std::isfinite(loss))
      throw std::runtime_error("training diverged at step " + std::to_string(step + 1) +
                               " (loss is not finite); try a lower --lr");
    ++step;
    StepSample sample;
    sample.step = step;
    sample.seconds = Seconds(Clock::now() - started);
    sample.loss_sum = loss;
    sample.samples = count;
    sample.wall_ms = 1e3 * Seconds(Clock::now() - step_started);
    if (StepPoint* point = history.Add(sample)) point->batches = {{"batch", count}};
    loss_sum += loss;
    current.samples += count;
    summary.samples += count;
    summary.last_step_loss = loss / count;
    if (progress.Step(step, count))
      spdlog::info("step {}/{} epoch {}/{} loss {:.4f} {:.0f} samples/s ETA {}", step,
                   plan.total_steps(), epoch + 1, plan.epochs(),
                   loss_sum / static_cast<double>(current.samples), progress.samples_per_second(),
                   FormatDuration(progress.eta_seconds()));
    if (plan.EpochEnded(step)) evaluate(true);
    if (plan.CheckpointDue(step, cfg.checkpoint_every)) save(step);
    if (stop_wanted() && step < plan.total_steps()) {
      spdlog::warn("stop requested: saving and ending at step {}", step);
      summary.stopped_early = true;
      summary.stop_reason = "stopped";
      break;
    }
  }
  // A run that ended inside an epoch (--steps, or a stop) is evaluated too.
  if (current.samples > 0) {
    evaluate(false);
    save(step);
  }
  if (summary.stop_reason.empty()) summary.stop_reason = "training complete";
  summary.steps = step;
  const std::string final_path =
      FinalModelPath(cfg.export_path, cfg.checkpoint_dir,
                     cfg.state_dir.empty() ? tls::DefaultStateDir() : cfg.state_dir, spec.name());
  const SavedModel saved = SaveFinalModel(final_path, spec, model);
  summary.details["model_file"] = final_path;
  summary.details["history"] = history.ToJson();
  if (!summary.epochs.empty()) {
    summary.test_accuracy = summary.epochs.back().test_accuracy;
    summary.test_loss = summary.epochs.back().test_loss;
    summary.train_loss = summary.epochs.back().train_loss;
  }
  if (const TrainingProfiler* profiler = trainer.profiler()) {
    spdlog::info("--profile:\n{}", profiler->Table());
    profiler->AddTo(summary.details);
  }
  if (!cfg.report_path.empty()) summary.Write(cfg.report_path);
  timeline.Write();
  spdlog::info("final model: {}{}", final_path,
               saved.weights_dropped ? " (a text spec: the weights are not in it)" : "");
  return 0;
}

}  // namespace mt
