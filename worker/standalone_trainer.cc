#include "worker/standalone_trainer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "core/checkpoint/checkpoint.h"
#include "core/checkpoint/training_checkpoint.h"
#include "core/cli/common_options.h"
#include "core/data/dataset.h"
#include "core/data/sampler.h"
#include "core/model/model_spec.h"
#include "core/trace/span.h"
#include "core/train/evaluate.h"
#include "core/train/model_health.h"
#include "core/train/run_plan.h"
#include "core/train/run_summary.h"
#include "core/train/training_loop.h"
#include "core/util/atomic_file.h"
#include "core/util/process_stats.h"
#include "model_io/run_model.h"
#include "tls/tls_options.h"
#include "worker/compute_devices.h"
#include "worker/local_trainer.h"
#include "worker/worker_trace.h"

namespace mt {
namespace {

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

// The exchange "none": each step runs here, on this device's trainer.
class LocalSteps final : public StepExchange {
 public:
  LocalSteps(LocalTrainer& trainer, const RunPlan& plan, uint64_t seed, int64_t first_step,
             WorkerTrace* tracing, const std::atomic<bool>* stop)
      : trainer_(trainer),
        plan_(plan),
        seed_(seed),
        step_(first_step),
        tracing_(tracing),
        stop_(stop) {}

  ExchangeKind kind() const override { return ExchangeKind::kNone; }
  bool Begin() override {
    if (!stop_wanted()) return true;
    spdlog::warn("stop requested: saving and ending at step {}", step_);
    return false;
  }
  int64_t steps_done() const override { return step_; }
  bool WeightsCurrent() const override { return true; }
  bool StepInFlight() const override { return false; }
  StepOutcome Complete(bool /*more_may_follow*/) override {
    const int64_t epoch = plan_.EpochOf(step_);
    if (order_epoch_ != epoch) {
      order_ = EpochOrder(static_cast<size_t>(plan_.train_samples()), seed_, epoch);
      order_epoch_ = epoch;
    }
    const int64_t first = plan_.FirstSample(step_);
    const int count = plan_.BatchAt(step_);
    if (tracing_) tracing_->SetStep(step_);
    const int64_t step_begin = tracing_ ? trace::NowMicros() : 0;
    const double loss =
        trainer_.ComputeGradients(order_.data() + first, count, DropoutSeed(seed_, step_, first));
    trainer_.ApplyGradients();
    if (tracing_)
      tracing_->Add(
          trace::MakeSpan(trace::SpanKind::kStep, step_begin, trace::NowMicros(), -1, step_));
    if (!std::isfinite(loss))
      throw std::runtime_error("training diverged at step " + std::to_string(step_ + 1) +
                               " (loss is not finite); try a lower --lr");
    ++step_;
    StepOutcome out;
    out.samples = count;
    out.loss_sum = loss;
    return out;
  }
  std::string Failure() const override { return {}; }
  std::string StopReason() const override {
    return stop_wanted() && step_ < plan_.total_steps() ? "stopped" : "";
  }

 private:
  bool stop_wanted() const { return stop_ && stop_->load(); }

  LocalTrainer& trainer_;
  const RunPlan& plan_;
  uint64_t seed_;
  int64_t step_;
  WorkerTrace* tracing_;
  const std::atomic<bool>* stop_;
  std::vector<uint32_t> order_;
  int64_t order_epoch_ = -1;
};

// What the loop evaluates and saves: this device's model.
class StandaloneHooks final : public RunHooks {
 public:
  StandaloneHooks(const StandaloneConfig& cfg, const RunPlan& plan, const std::string& spec_text,
                  LocalTrainer& trainer, const Dataset& test, WorkerTrace* tracing)
      : cfg_(cfg),
        plan_(plan),
        spec_text_(spec_text),
        trainer_(trainer),
        test_(test),
        tracing_(tracing) {}

  EvalResult Evaluate(int64_t step) override {
    const trace::ScopedSpan span(tracing_, trace::SpanKind::kEvaluation, -1, step);
    return mt::Evaluate(trainer_.model(), test_);
  }
  void SaveCheckpoint(int64_t step) override {
    if (cfg_.checkpoint_dir.empty()) return;
    const trace::ScopedSpan span(tracing_, trace::SpanKind::kCheckpoint, -1, step);
    const std::string path = SaveTrainingCheckpoint(
        cfg_.checkpoint_dir, spec_text_, trainer_.model(), trainer_.optimizer(),
        RunPosition{step, plan_.EpochOf(step), cfg_.seed, plan_.batch()});
    spdlog::info("checkpoint {}", path);
  }
  void OnHistoryPoint(StepPoint& point) override {
    point.batches = {{"batch", plan_.BatchAt(point.step - 1)}};
  }
  void OnEvaluated(const EvalPoint& point) override { evals_.push_back(point); }
  // The hub's end-of-run check: a model at chance or broken is no result.
  std::string ResultProblem(double /*last_test_loss*/) override {
    const std::string problem = health::ResultProblem(trainer_.model(), evals_, test_.NumClasses());
    if (!problem.empty()) spdlog::error("{}", problem);
    return problem;
  }
  void Log(const std::string& line) override { spdlog::info("{}", line); }

 private:
  const StandaloneConfig& cfg_;
  const RunPlan& plan_;
  const std::string& spec_text_;
  LocalTrainer& trainer_;
  const Dataset& test_;
  WorkerTrace* tracing_;
  std::vector<EvalPoint> evals_;
};

}  // namespace

int RunStandalone(const StandaloneConfig& cfg, const std::atomic<bool>* stop) {
  // The device first: a --device this machine cannot honour fails at once.
  ComputeDevices devices(cfg.device, static_cast<int>(cfg.threads));
  const int64_t rss_before_model = ReadResidentMemory().current_bytes;  // for --profile
  if (!cfg.checkpoint_dir.empty()) EnsureWritableDirectory(cfg.checkpoint_dir, "--checkpoint-dir");
  // --trace: checked now, written at the end (or by its destructor on an error).
  WorkerTrace timeline(cfg.trace_path, "mtworker --standalone");
  RunModel run = LoadRunModel(cfg.model, cfg.tuning);
  DataOptions read;
  const DatasetInfo train_info = cli::PeekTrainingSet(cfg.dataset, cfg.data, run.spec, &read);
  const std::string fitted = FitOutputsToClasses(run, train_info.classes, train_info.class_names);
  if (!fitted.empty()) spdlog::info("{}", fitted);
  for (const std::string& warning : run.warnings) spdlog::warn("{}", warning);
  const proto::ModelSpec& spec = run.spec;
  const std::string spec_text = ModelSpecToText(spec);
  const int batch = static_cast<int>(cfg.batch);
  TrainerSpec trainer_spec;
  trainer_spec.model = spec;
  trainer_spec.dataset = cfg.dataset;
  trainer_spec.optimizer = cfg.optimizer;
  trainer_spec.capacity = batch;
  trainer_spec.seed = cfg.seed;
  trainer_spec.frozen = run.frozen;
  trainer_spec.data = cfg.data;
  trainer_spec.recompute = cfg.recompute;
  trainer_spec.activation_precision = cfg.activation_precision;
  LocalTrainer trainer(devices, trainer_spec);
  read.classes = trainer.model().num_classes();
  const auto test = LoadDataset(cfg.dataset, Split::kTest, read);
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
  summary.optimizer = OptimizerKindName(cfg.optimizer.kind);
  summary.lr = cfg.optimizer.lr;
  summary.seed = cfg.seed;
  summary.parameters = static_cast<int64_t>(model.ParamCount());
  summary.details["batch"] = cfg.batch;
  summary.details["recompute"] = trainer.recomputes();
  summary.details["activation_precision"] =
      ActivationPrecisionName(trainer.model().activation_precision());
  summary.details["opencl_device"] = devices.opencl_name();

  summary.details["frozen_layers"] = run.frozen;
  summary.details["model_warnings"] = run.warnings;
  summary.details["class_names"] = train_info.class_names;
  summary.details["skipped_images"] = train_info.skipped;
  summary.details["augment"] = trainer.augment().ToString();
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
      "{} epoch(s), device {}, {} thread(s), {} lr {}; memory {} KiB at this batch, {} KiB per "
      "extra sample",
      spec.name(), model.ParamCount(), cfg.dataset, plan.train_samples(), test->Size(), batch,
      plan.total_steps(), plan.epochs(), summary.device, cfg.threads, trainer.optimizer().Kind(),
      cfg.optimizer.lr, model.MemoryBytes(batch) / 1024, model.MemoryBytesPerSample() / 1024);

  LocalSteps steps(trainer, plan, cfg.seed, step, tracing, stop);
  StandaloneHooks hooks(cfg, plan, spec_text, trainer, *test, tracing);
  TrainingLoop loop(plan, cfg, steps, hooks);
  loop.Run();
  loop.FillSummary(summary);
  if (loop.failed()) {
    // As the hub: the report says why, and no model file passes for a result.
    if (!cfg.report_path.empty()) summary.Write(cfg.report_path);
    timeline.Write();
    return 1;
  }
  const std::string final_path =
      FinalModelPath(cfg.export_path, cfg.checkpoint_dir,
                     cfg.state_dir.empty() ? tls::DefaultStateDir() : cfg.state_dir, run.label);
  const SavedModel saved =
      SaveFinalModel(final_path, spec, model, {{"mt.training", summary.ModelNote()}});
  summary.details["model_file"] = final_path;
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
