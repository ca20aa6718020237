#include "model_io/weights_fit.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

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

namespace {

struct WeightedLayer {
  const Layer* layer;
  size_t params, stats;
};

std::vector<WeightedLayer> WeightedLayers(const Model& model) {
  std::vector<WeightedLayer> out;
  for (const auto& l : model.layers())
    if (l->ParamCount() > 0 || l->RunningStatCount() > 0)
      out.push_back({l.get(), l->ParamCount(), l->RunningStatCount()});
  return out;
}

std::string Describe(const WeightedLayer& w) {
  return std::string(w.layer->Type()) + " '" + w.layer->name() + "' (" + std::to_string(w.params) +
         " parameters" + (w.stats ? ", " + std::to_string(w.stats) + " running statistics" : "") +
         ")";
}

}  // namespace

void CheckSameLayout(const Model& into, const proto::ModelSpec& into_spec, const Model& from,
                     const std::string& origin) {
  const std::vector<WeightedLayer> a = WeightedLayers(into), b = WeightedLayers(from);
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const std::string ordinal = "layer with weights " + std::to_string(i + 1);
    if (i >= b.size())
      throw std::invalid_argument(origin + " has no " + ordinal + " for model " + into_spec.name() +
                                  "'s " + Describe(a[i]));
    if (i >= a.size())
      throw std::invalid_argument(origin + "'s " + ordinal + ", " + Describe(b[i]) +
                                  ", has no counterpart: model " + into_spec.name() + " has " +
                                  std::to_string(a.size()) + " layers with weights");
    if (std::string(a[i].layer->Type()) != b[i].layer->Type() || a[i].params != b[i].params ||
        a[i].stats != b[i].stats)
      throw std::invalid_argument(origin + "'s " + ordinal + ", " + Describe(b[i]) +
                                  ", does not fit model " + into_spec.name() + "'s " +
                                  Describe(a[i]));
  }
}

}  // namespace mt
