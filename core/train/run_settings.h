// The settings of a training run that mthub and mtworker --standalone
// share, in one struct: HubConfig (hub/hub_config.h) and StandaloneConfig
// (worker/standalone_trainer.h) extend it with what only they have. What
// each process computes with and writes (threads, report, trace) is
// core/train/process_settings.h. Choices
// are typed here (OptimizerConfig, enums in the configs that extend it),
// parsed at the command-line edge (core/cli/, hub/hub_options.cc,
// worker/worker_options.cc).
#pragma once

#include <cstdint>
#include <string>

#include "core/data/data_settings.h"
#include "core/model/fine_tuning.h"
#include "core/optim/optimizer.h"
#include "core/train/training_loop.h"

namespace mt {

// The loop's settings (eval_every, patience, target_accuracy,
// checkpoint_every, log_every_seconds) are the first part; the hub's
// default for checkpoint_every differs (HubConfig).
struct RunSettings : LoopSettings {
  std::string model = "lenet5";  // preset, spec file, .onnx or .mtc
  std::string dataset = "fashion-mnist";
  DataSettings data;        // --test-fraction, --skip-bad-images, --augment
  FineTuning tuning;        // --init-from, --freeze, --train-only
  std::string export_path;  // "": the final model to checkpoint_dir or state_dir/models
  int64_t epochs = 0;       // 0: as many as max_steps needs, else 1
  int64_t max_steps = 0;    // 0: whole epochs
  OptimizerConfig optimizer = RunDefaultOptimizer();
  uint64_t seed = 1;
  std::string checkpoint_dir;
  bool resume = false;  // continue from the newest checkpoint in checkpoint_dir
};

}  // namespace mt
