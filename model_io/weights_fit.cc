#include "model_io/weights_fit.h"

#include <stdexcept>

#include "core/model/model_spec.h"
#include "kernels/cpu/cpu_backend.h"

namespace mt {

BuiltModel BuildOnCpu(const proto::ModelSpec& spec) {
  BuiltModel built;
  built.backend = std::make_unique<kernels::CpuBackend>(1);
  built.model = BuildModel(spec, *built.backend);
  return built;
}

void CheckWeightsFit(const Model& model, const proto::ModelSpec& spec, const ModelWeights& weights,
                     const std::string& origin) {
  if (weights.params.size() != model.ParamCount())
    throw std::invalid_argument(origin + ": holds " + std::to_string(weights.params.size()) +
                                " parameters, but model " + spec.name() + " has " +
                                std::to_string(model.ParamCount()));
  if (weights.running_stats.size() != model.RunningStatCount())
    throw std::invalid_argument(origin + ": holds " + std::to_string(weights.running_stats.size()) +
                                " running statistics, but model " + spec.name() + " has " +
                                std::to_string(model.RunningStatCount()));
}

}  // namespace mt
