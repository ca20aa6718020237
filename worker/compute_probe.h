// What one sample costs this worker, timed before its first step and sent
// in Hello (compute_ms_per_sample), so the hub can size the global batch
// from its devices' speeds before any step has measured them
// (hub/policy/batch_controller.h, FollowingTotal).
#pragma once

#include "worker/local_trainer.h"
#include "worker/slowdown_pacer.h"
#include "worker/worker_config.h"

namespace mt {

// The pacer a worker's steps run under: --slowdown over the computing
// thread's CPU time where one CPU thread computes, else wall time.
SlowdownPacer PacerFor(const WorkerConfig& cfg);

// The batch it is timed at: the hub's 64 per worker, since a sample costs
// more in small batches than in large ones.
constexpr int kProbeBatch = 64;

// Forward and backward on the first `batch` training samples (at most the
// trainer's capacity), once to warm up and twice timed; the faster of the
// two, as --slowdown makes it, in ms per sample. The weights and running
// statistics are as they were afterwards; the gradients are not.
double TimeComputePerSample(LocalTrainer& trainer, const SlowdownPacer& pacer, int batch);

}  // namespace mt
