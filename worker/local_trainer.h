// A model training on this device: its data, the placement of its layers,
// the model, the optimizer and the batch staging, built once. Standalone
// training runs one; the distributed worker keeps one across reconnects, so
// a dropped link does not reload the dataset or re-time --device auto.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/data/data_settings.h"
#include "core/data/dataset.h"
#include "core/model/model.h"
#include "core/optim/optimizer.h"
#include "core/profile/training_profiler.h"
#include "core/trace/span.h"
#include "core/train/batch_buffer.h"
#include "model.pb.h"
#include "worker/compute_devices.h"

namespace mt {

struct TrainerSpec {
  proto::ModelSpec model;
  std::string dataset;  // name or path (core/data/dataset.h)
  OptimizerConfig optimizer;
  int capacity = 1;   // the largest batch it will be given
  uint64_t seed = 1;  // initial weights (the hub replaces them with its own)
  // What the model and a full batch may take here (0: this machine's
  // physical memory): a capacity beyond it is refused before allocating.
  int64_t memory_budget_bytes = 0;
  // Replay cheap layers instead of keeping their outputs (Model::SetRecompute);
  // turned on when the budget would not hold `capacity` samples without.
  bool recompute = false;
  ActivationPrecision activation_precision = kDefaultActivationPrecision;
  // Layers whose parameters stay as they are (fine-tuning the rest).
  std::vector<std::string> frozen;
  // How the dataset is read, and training samples augmented (auto: as
  // suits the data, core/data/augment.h).
  DataSettings data;
};

class LocalTrainer {
 public:
  // Loads the training set, places the layers (timed on the first batch for
  // --device auto), builds the model and the optimizer. Throws with a clear
  // message when the data does not fit the model.
  LocalTrainer(ComputeDevices& devices, const TrainerSpec& spec);

  // Whether this trainer can serve `spec` as it is (same model, data and
  // optimizer, enough capacity): then a reconnect keeps it.
  bool Serves(const TrainerSpec& spec) const;

  Model& model() { return *model_; }
  const Model& model() const { return *model_; }
  Optimizer& optimizer() { return *optimizer_; }
  const Optimizer& optimizer() const { return *optimizer_; }
  const Dataset& data() const { return *data_; }
  const Augmentation& augment() const { return augment_; }
  int capacity() const { return spec_.capacity; }
  bool recomputes() const { return spec_.recompute; }
  // Whether the memory budget turned recomputation on (not --recompute).
  bool recomputes_for_budget() const { return for_budget_; }
  const std::string& dataset() const { return spec_.dataset; }
  const std::string& model_name() const { return spec_.model.name(); }

  // Forward and backward on the samples at `indices`; the gradient of the
  // mean loss is then in model().grads(). Returns the loss summed over the
  // batch. Allocates nothing. `listener` hears as gradients become final
  // (Model::ComputeGradients).
  double ComputeGradients(const uint32_t* indices, int n, uint64_t dropout_seed,
                          GradientListener* listener = nullptr);
  // The optimizer step with what model().grads() holds, or with `gradient`
  // (ParamCount() floats on the host, e.g. the hub's average).
  void ApplyGradients();
  void ApplyGradients(const float* gradient);

  // --profile: from now on every step is timed layer by layer (each layer
  // synchronised, so a little slower) and its figures gathered; `setup`
  // gives what the trainer does not know (threads, baseline RSS, datasets).
  void EnableProfiling(const ProfileSetup& setup);
  const TrainingProfiler* profiler() const { return profiler_.get(); }

  // --trace (core/trace/; null: off): every pass is timed layer by layer,
  // as with --profile, and its spans go to `sink` with the optimizer's.
  void set_trace(trace::SpanSink* sink) { trace_ = sink; }

 private:
  ComputeDevices& devices_;
  TrainerSpec spec_;
  bool for_budget_ = false;
  std::string spec_text_;
  std::unique_ptr<Dataset> data_;
  Augmentation augment_;  // spec.data.augment, resolved for data_
  std::unique_ptr<BatchBuffer> batch_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<TrainingProfiler> profiler_;  // null unless profiling
  trace::SpanSink* trace_ = nullptr;
  LayerTimes trace_times_;  // tracing without --profile
  double TracedGradients(uint64_t dropout_seed, GradientListener* listener);
};

// What training `capacity` samples at a time takes here, to the byte of
// what the model, the optimizer and the batch staging allocate
// (PredictTrainingMemory, checked against the allocator by
// tests/core/memory_exact_test.cc).
double BatchNeeds(const Model& model, int capacity, const OptimizerConfig& optimizer);
// Throws unless `capacity` samples of the model's input, with the model's
// memory and the optimizer's at that batch, fit in `budget_bytes` (0:
// physical memory).
void CheckBatchFits(const Model& model, int capacity, const OptimizerConfig& optimizer,
                    int64_t budget_bytes);
bool BatchFits(const Model& model, int capacity, const OptimizerConfig& optimizer,
               int64_t budget_bytes);

}  // namespace mt
