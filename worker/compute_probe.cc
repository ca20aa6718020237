#include "worker/compute_probe.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <vector>

namespace mt {

SlowdownPacer PacerFor(const WorkerConfig& cfg) {
  return SlowdownPacer(cfg.slowdown, cfg.threads <= 1 && cfg.device == DeviceChoice::kCpu);
}

double TimeComputePerSample(LocalTrainer& trainer, const SlowdownPacer& pacer, int batch) {
  const int n = std::min({batch, trainer.capacity(), static_cast<int>(trainer.data().Size())});
  if (n < 1) return 0;
  std::vector<uint32_t> indices(static_cast<size_t>(n));
  std::iota(indices.begin(), indices.end(), 0u);
  // Training passes move batch norm's running statistics; the hub's are
  // the ones that count, so these are put back.
  Model& model = trainer.model();
  std::vector<float> stats(model.RunningStatCount());
  model.GetRunningStats(stats.data());
  double best = std::numeric_limits<double>::infinity();
  for (int pass = 0; pass < 3; ++pass) {
    const double began = pacer.Now();
    trainer.ComputeGradients(indices.data(), n, /*dropout_seed=*/pass);
    if (pass > 0) best = std::min(best, pacer.Now() - began);
  }
  model.SetRunningStats(stats.data());
  return 1e3 * pacer.Emulated(best) / n;
}

}  // namespace mt
