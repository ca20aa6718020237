#include "worker/standalone_trainer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "core/checkpoint/checkpoint.h"
#include "core/checkpoint/training_checkpoint.h"
#include "core/data/dataset.h"
#include "core/data/sampler.h"
#include "core/model/model_spec.h"
#include "core/train/batch_buffer.h"
#include "core/train/evaluate.h"
#include "core/util/atomic_file.h"
#include "core/util/json.h"
#include "core/util/process_stats.h"
#include "core/util/stop_signal.h"
#include "worker/compute_devices.h"
#include "kernels/dropout_hash.h"

namespace mt {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

void CheckCompatible(const Model& model, const Dataset& data, const std::string& name) {
  if (model.input_shape() != data.SampleShape())
    throw std::runtime_error("dataset " + name + " has samples of " + data.SampleShape().ToString() +
                             " but the model takes " + model.input_shape().ToString());
  if (model.num_classes() < data.NumClasses())
    throw std::runtime_error("dataset " + name + " has " + std::to_string(data.NumClasses()) +
                             " classes but the model outputs " + std::to_string(model.num_classes()));
}

struct EpochStats {
  int64_t epoch = 0;
  double train_loss = 0;
  double train_seconds = 0;
  int64_t samples = 0;
  EvalResult test;
};

}  // namespace

int RunStandalone(const StandaloneConfig& cfg) {
  // The device first: a --device this machine cannot honour fails at once.
  ComputeDevices devices(cfg.device, static_cast<int>(cfg.threads));
  if (!cfg.checkpoint_dir.empty()) EnsureWritableDirectory(cfg.checkpoint_dir, "--checkpoint-dir");
  const auto train = LoadDataset(cfg.dataset, Split::kTrain);
  const auto test = LoadDataset(cfg.dataset, Split::kTest);
  const proto::ModelSpec spec = LoadModelSpec(cfg.model);
  const std::string spec_text = ModelSpecToText(spec);

  kernels::Backend& backend = devices.cpu();
  CheckCompatible(*BuildModel(spec, backend), *train, cfg.dataset);
  const int batch = static_cast<int>(cfg.batch);
  BatchBuffer staging(train->SampleShape(), batch);
  std::vector<kernels::Backend*> placement;
  {
    std::vector<uint32_t> first(static_cast<size_t>(std::min<int64_t>(batch, static_cast<int64_t>(train->Size()))));
    for (size_t i = 0; i < first.size(); ++i) first[i] = static_cast<uint32_t>(i);
    staging.Fill(*train, first.data(), static_cast<int>(first.size()));
    placement = devices.Place(spec, staging.images(), staging.labels(), static_cast<int>(first.size()), cfg.seed);
  }
  auto model = BuildModel(spec, backend, placement);
  CheckCompatible(*model, *test, cfg.dataset);
  model->Reserve(batch);
  model->InitParams(cfg.seed);
  auto optimizer = MakeOptimizer(cfg.optimizer, backend, model->ParamCount());

  const int64_t n = static_cast<int64_t>(train->Size());
  const int64_t steps_per_epoch = (n + batch - 1) / batch;
  int64_t total_steps = steps_per_epoch * cfg.epochs;
  if (cfg.max_steps > 0) total_steps = std::min(total_steps, cfg.max_steps);

  int64_t step = 0;
  int64_t resumed_from = -1;
  if (cfg.resume) {
    const std::string latest = LatestCheckpoint(cfg.checkpoint_dir);
    if (latest.empty()) {
      spdlog::info("no checkpoint in {}: starting from scratch", cfg.checkpoint_dir);
    } else {
      const Checkpoint ck = LoadCheckpoint(latest);
      if (ck.model_spec != spec_text)
        throw std::runtime_error("checkpoint " + latest + " is for a different model than --model " + cfg.model);
      if (ck.weights.size() != model->ParamCount())
        throw std::runtime_error("checkpoint " + latest + ": weight count does not match the model");
      model->SetParams(ck.weights.data());
      optimizer->LoadState(ck.optimizer);
      step = ck.step;
      resumed_from = step;
      spdlog::info("resumed from {} at step {}", latest, step);
    }
  }

  spdlog::info("standalone: model {} ({} parameters), dataset {} ({} train, {} test), batch {}, device {}, "
               "{} thread(s), {} lr {}; memory {} KiB at this batch, {} KiB per extra sample",
               spec.name(), model->ParamCount(), cfg.dataset, n, test->Size(), batch, DeviceLabel(*model),
               cfg.threads,
               optimizer->Kind(), cfg.optimizer.lr, model->MemoryBytes(batch) / 1024,
               (model->MemoryBytes(2) - model->MemoryBytes(1)) / 1024);

  auto save = [&](int64_t at_step) {
    if (cfg.checkpoint_dir.empty()) return;
    const std::string path = SaveTrainingCheckpoint(cfg.checkpoint_dir, spec_text, *model, *optimizer,
                                                    RunPosition{at_step, at_step / steps_per_epoch, cfg.seed});
    spdlog::info("checkpoint {}", path);
  };

  std::vector<EpochStats> epochs;
  std::vector<uint32_t> order;
  int64_t order_epoch = -1;
  double train_seconds = 0;
  int64_t samples = 0;
  bool stopped = false;

  while (step < total_steps && !stopped) {
    const int64_t epoch = step / steps_per_epoch;
    if (order_epoch != epoch) {
      order = EpochOrder(static_cast<size_t>(n), cfg.seed, epoch);
      order_epoch = epoch;
    }
    EpochStats stats;
    stats.epoch = epoch + 1;
    double loss_sum = 0;
    const auto t_epoch = Clock::now();
    auto t_log = t_epoch;
    int64_t samples_at_log = 0;
    const int64_t epoch_end = std::min(total_steps, (epoch + 1) * steps_per_epoch);
    for (; step < epoch_end; ++step) {
      const int64_t start = (step % steps_per_epoch) * batch;
      const int count = static_cast<int>(std::min<int64_t>(batch, n - start));
      staging.Fill(*train, order.data() + start, count);
      model->SetBatch(staging.images(), staging.labels(), count);
      const double loss = model->ComputeGradients(kernels::MixBits(cfg.seed) ^ static_cast<uint64_t>(step));
      optimizer->Step(model->params(), model->grads());
      if (!std::isfinite(loss))
        throw std::runtime_error("training diverged at step " + std::to_string(step + 1) +
                                 " (loss is not finite); try a lower --lr");
      loss_sum += loss;
      stats.samples += count;
      const auto now = Clock::now();
      if (Seconds(now - t_log) >= cfg.log_every_seconds) {
        const double rate = (stats.samples - samples_at_log) / Seconds(now - t_log);
        const double eta = (total_steps - step - 1) * static_cast<double>(batch) / std::max(rate, 1.0);
        spdlog::info("epoch {}/{} step {}/{} loss {:.4f} {:.0f} samples/s ETA {:.0f}s", epoch + 1, cfg.epochs,
                     step + 1 - epoch * steps_per_epoch, steps_per_epoch, loss_sum / stats.samples, rate, eta);
        t_log = now;
        samples_at_log = stats.samples;
      }
      if (cfg.checkpoint_every > 0 && (step + 1) % cfg.checkpoint_every == 0) save(step + 1);
      if (StopSignalReceived()) {
        spdlog::warn("stop requested: saving and ending at step {}", step + 1);
        ++step;
        stopped = true;
        break;
      }
    }
    stats.train_seconds = Seconds(Clock::now() - t_epoch);
    stats.train_loss = stats.samples ? loss_sum / stats.samples : 0;
    train_seconds += stats.train_seconds;
    samples += stats.samples;
    stats.test = Evaluate(*model, *test);
    spdlog::info("epoch {} done: train loss {:.4f}, test loss {:.4f}, test accuracy {:.4f}, {:.0f} samples/s",
                 stats.epoch, stats.train_loss, stats.test.mean_loss, stats.test.accuracy,
                 stats.samples / std::max(stats.train_seconds, 1e-9));
    epochs.push_back(stats);
    save(step);
  }

  if (!cfg.report_path.empty()) {
    Json r = Json::Object();
    const EpochStats last = epochs.empty() ? EpochStats{} : epochs.back();
    r.Set("mode", "standalone")
        .Set("model", spec.name())
        .Set("dataset", cfg.dataset)
        .Set("device", DeviceLabel(*model))
        .Set("opencl_device", devices.opencl_name())
        .Set("placement", model->PlacementSummary())
        .Set("threads", cfg.threads)
        .Set("batch", cfg.batch)
        .Set("optimizer", cfg.optimizer.kind)
        .Set("lr", static_cast<double>(cfg.optimizer.lr))
        .Set("seed", cfg.seed)
        .Set("parameters", static_cast<int64_t>(model->ParamCount()))
        .Set("test_accuracy", last.test.accuracy)
        .Set("test_loss", last.test.mean_loss)
        .Set("final_loss", last.train_loss)
        .Set("steps", step)
        .Set("samples", samples)
        .Set("train_seconds", train_seconds)
        .Set("samples_per_second", train_seconds > 0 ? samples / train_seconds : 0.0)
        .Set("peak_rss_bytes", PeakRssBytes())
        .Set("resumed_from_step", resumed_from)
        .Set("stopped_early", stopped);
    Json per_epoch = Json::Array();
    for (const auto& e : epochs)
      per_epoch.Push(Json::Object()
                         .Set("epoch", e.epoch)
                         .Set("train_loss", e.train_loss)
                         .Set("test_loss", e.test.mean_loss)
                         .Set("test_accuracy", e.test.accuracy)
                         .Set("samples", e.samples)
                         .Set("train_seconds", e.train_seconds));
    r.Set("epochs", std::move(per_epoch));
    WriteFileAtomically(cfg.report_path, r.Dump());
  }
  return 0;
}

}  // namespace mt
