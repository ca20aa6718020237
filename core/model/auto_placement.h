// `--device auto`: where each layer runs is a measurement, not a guess. On a
// real batch, every candidate backend runs the whole model while each layer
// is timed; each layer then goes where its forward + backward was faster.
// That per-layer pick, and every all-on-one-backend placement, are then timed
// as whole steps (copies between backends included), and the fastest wins,
// with all on the first candidate (the CPU) kept unless another placement
// beats it by a clear margin, so auto is never slower than all-CPU.
//
// A layer is never timed or placed on a backend that lacks one of its ops:
// the model runs it on the home backend instead (Model::fallbacks), so "all
// on X" means all that X can run, and the per-layer pick only considers the
// backends that can run each layer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/backend.h"
#include "model.pb.h"

namespace mt {

// In PlacementRow::ms: the layer cannot run on that candidate.
constexpr double kNotRun = -1;

struct PlacementRow {
  std::string layer;
  std::vector<double> ms;  // forward + backward per candidate backend, or kNotRun
  int chosen = 0;          // index into the candidates
};

struct PlacementCandidate {
  // "all cpu", "all opencl", "all opencl where it can" (some layers lack ops
  // there and run on the home backend), "per layer"
  std::string name;
  std::vector<kernels::Backend*> placement;  // where each layer really runs
  double step_ms = 0;                        // whole forward + backward step, median
};

struct PlacementChoice {
  std::vector<kernels::Backend*> placement;  // per layer
  std::vector<PlacementRow> rows;
  std::vector<PlacementCandidate> candidates;
  int chosen = 0;  // index into candidates
  // The table the worker prints: per layer the time on each backend and
  // where it runs, then each whole-step candidate.
  std::string Table(const std::vector<kernels::Backend*>& backends) const;
};

// Margin another placement must beat all-on-candidates[0] by.
constexpr double kPlacementMargin = 0.03;

// `home` holds parameters and gradients (as in training); `candidates`
// starts with the CPU and includes `home` (where layers fall back to). Times `repeats` steps of
// `batch` samples after warm-up; the model's parameters come from `seed`, nothing is trained.
PlacementChoice ChoosePlacement(const proto::ModelSpec& spec, kernels::Backend& home,
                                const std::vector<kernels::Backend*>& candidates,
                                const float* images, const int32_t* labels, int batch,
                                uint64_t seed, int repeats = 5);

}  // namespace mt
