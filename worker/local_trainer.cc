#include "worker/local_trainer.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include <spdlog/spdlog.h>
#include <unistd.h>

#include "core/cli/common_options.h"
#include "core/model/model_spec.h"
#include "core/profile/memory_breakdown.h"
#include "core/trace/layer_spans.h"

namespace mt {

namespace {

double MemoryLimit(int64_t budget_bytes) {
  return budget_bytes > 0 ? static_cast<double>(budget_bytes)
                          : static_cast<double>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
}

}  // namespace

double BatchNeeds(const Model& model, int capacity, const OptimizerConfig& optimizer) {
  // The capacity is an int and every part grows at most linearly in it, so
  // the int64 sum cannot overflow.
  const size_t slots = model.ParamCount() * static_cast<size_t>(SlotsPerParam(optimizer));
  return static_cast<double>(PredictTrainingMemory(model, std::max(capacity, 1), slots).Total());
}

bool BatchFits(const Model& model, int capacity, const OptimizerConfig& optimizer,
               int64_t budget_bytes) {
  return capacity >= 1 && BatchNeeds(model, capacity, optimizer) <= MemoryLimit(budget_bytes);
}

void CheckBatchFits(const Model& model, int capacity, const OptimizerConfig& optimizer,
                    int64_t budget_bytes) {
  const double limit = MemoryLimit(budget_bytes);
  const double need = BatchNeeds(model, capacity, optimizer);
  if (capacity < 1 || need > limit)
    throw std::runtime_error(
        "batches of " + std::to_string(capacity) + " samples need " +
        std::to_string(static_cast<int64_t>(need / (1 << 20))) + " MiB here, more than the " +
        std::to_string(static_cast<int64_t>(limit / (1 << 20))) + " MiB " +
        (budget_bytes > 0 ? "of --memory-budget" : "of memory this machine has"));
}

LocalTrainer::LocalTrainer(ComputeDevices& devices, const TrainerSpec& spec)
    : devices_(devices), spec_(spec), spec_text_(ModelSpecToText(spec.model)) {
  kernels::CpuBackend& home = devices_.cpu();
  {
    const auto probe = BuildModel(spec.model, home, {}, spec.frozen);
    // A phone's own folder is labelled as the model's classes are named,
    // and refused when it does not fit the model.
    DataOptions read = cli::ReadOptionsFor(spec.dataset, spec.data, spec.model);
    read.classes = probe->num_classes();
    data_ = LoadDataset(spec.dataset, Split::kTrain, read);
    augment_ = ResolveAugment(spec.data.augment, data_->SampleShape(), data_->IsImageFolder());
    probe->SetActivationPrecision(spec.activation_precision);
    if (!spec_.recompute && spec.memory_budget_bytes > 0 &&
        !BatchFits(*probe, spec.capacity, spec.optimizer, spec.memory_budget_bytes)) {
      const auto replaying = BuildModel(spec.model, home, {}, spec.frozen);
      replaying->SetActivationPrecision(spec.activation_precision);
      replaying->SetRecompute(true);
      if (BatchFits(*replaying, spec.capacity, spec.optimizer, spec.memory_budget_bytes)) {
        spec_.recompute = for_budget_ = true;
        spdlog::info(
            "--memory-budget: batches of {} fit only with recomputation ({} KiB per sample "
            "instead of {}): recomputing",
            spec.capacity, replaying->MemoryBytesPerSample() >> 10,
            probe->MemoryBytesPerSample() >> 10);
      }
    }
    probe->SetRecompute(spec_.recompute);
    CheckBatchFits(*probe, spec.capacity, spec.optimizer, spec.memory_budget_bytes);
  }
  batch_ = std::make_unique<BatchBuffer>(data_->SampleShape(), spec.capacity);
  // Placement is timed on this device's own data at a typical batch.
  const int n =
      static_cast<int>(std::min<size_t>({static_cast<size_t>(spec.capacity), 64, data_->Size()}));
  std::vector<uint32_t> first(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) first[static_cast<size_t>(i)] = static_cast<uint32_t>(i);
  batch_->Fill(*data_, first.data(), n);
  model_ = BuildModel(spec.model, home,
                      devices_.Place(spec.model, batch_->images(), batch_->labels(), n, spec.seed),
                      spec.frozen);
  model_->SetActivationPrecision(spec.activation_precision);
  model_->SetRecompute(spec_.recompute);
  model_->Reserve(spec.capacity);
  model_->InitParams(spec.seed);
  // Parameters, gradients and the optimizer stay on the CPU whatever the
  // placement, so a worker's copy stays bit-identical to the hub's.
  optimizer_ = MakeOptimizer(spec.optimizer, home, model_->ParamCount());
  if (!spec.frozen.empty()) optimizer_->set_trained_ranges(model_->TrainedRanges());
}

bool LocalTrainer::Serves(const TrainerSpec& spec) const {
  const OptimizerConfig& a = spec_.optimizer;
  const OptimizerConfig& b = spec.optimizer;
  const bool same_optimizer = a.kind == b.kind && a.lr == b.lr && a.momentum == b.momentum &&
                              a.weight_decay == b.weight_decay && a.beta1 == b.beta1 &&
                              a.beta2 == b.beta2 && a.eps == b.eps;
  const DataSettings &da = spec.data, &db = spec_.data;
  const bool same_data = spec.dataset == spec_.dataset && da.test_fraction == db.test_fraction &&
                         da.skip_bad_images == db.skip_bad_images &&
                         da.augment.flip == db.augment.flip && da.augment.crop == db.augment.crop;
  return same_optimizer && same_data && spec.capacity <= spec_.capacity &&
         spec.frozen == spec_.frozen && ModelSpecToText(spec.model) == spec_text_;
}

double LocalTrainer::ComputeGradients(const uint32_t* indices, int n, uint64_t dropout_seed,
                                      GradientListener* listener) {
  const auto begin = std::chrono::steady_clock::now();
  batch_->Fill(*data_, indices, n, augment_, dropout_seed);
  model_->SetBatch(batch_->images(), batch_->labels(), n);
  if (trace_ && !profiler_) return TracedGradients(dropout_seed, listener);
  if (!profiler_) return model_->ComputeGradients(dropout_seed, nullptr, listener);
  const auto filled = std::chrono::steady_clock::now();
  const double loss = model_->ComputeGradients(dropout_seed, profiler_->times(), listener);
  const auto done = std::chrono::steady_clock::now();
  profiler_->EndPass(n, std::chrono::duration<double>(filled - begin).count(),
                     std::chrono::duration<double>(done - filled).count());
  if (trace_) trace::RecordLayerSpans(*profiler_->times(), *trace_);
  return loss;
}

double LocalTrainer::TracedGradients(uint64_t dropout_seed, GradientListener* listener) {
  const double loss = model_->ComputeGradients(dropout_seed, &trace_times_, listener);
  trace::RecordLayerSpans(trace_times_, *trace_);
  return loss;
}

void LocalTrainer::ApplyGradients() {
  const trace::ScopedSpan span(trace_, trace::SpanKind::kOptimizer);
  const auto begin = std::chrono::steady_clock::now();
  optimizer_->Step(model_->params(), model_->grads());
  if (profiler_)
    profiler_->EndOptimizerStep(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
}

void LocalTrainer::EnableProfiling(const ProfileSetup& setup) {
  profiler_ = std::make_unique<TrainingProfiler>(*model_, spec_.model, spec_.capacity,
                                                 optimizer_->slot_values(), setup);
}

void LocalTrainer::ApplyGradients(const float* gradient) {
  devices_.cpu().Upload(gradient, model_->grads().Slice(0, model_->ParamCount()));
  ApplyGradients();
}

}  // namespace mt
