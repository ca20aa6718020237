#include "core/model/fine_tuning.h"

#include <algorithm>

#include "core/model/model_spec.h"

namespace mt {
namespace {

bool HasParameters(const proto::Layer& l) {
  return l.has_conv() || l.has_dense() || l.has_batchnorm();
}

// Each name is a layer of the model with weights: naming one without
// (relu1) would freeze or train nothing, and the run would not be the one
// asked for.
void CheckNamed(const proto::ModelSpec& spec, const std::vector<std::string>& names,
                const std::string& flag) {
  for (const std::string& name : names) {
    const auto layer = std::find_if(spec.layer().begin(), spec.layer().end(),
                                    [&](const proto::Layer& l) { return l.name() == name; });
    if (layer != spec.layer().end() && HasParameters(*layer)) continue;
    std::string layers;
    for (const proto::Layer& l : spec.layer())
      if (HasParameters(l) && !l.name().empty()) layers += (layers.empty() ? "" : ", ") + l.name();
    throw ModelSpecError(flag + ": model " + spec.name() +
                         (layer == spec.layer().end() ? " has no layer named '" + name + "'"
                                                      : "'s layer '" + name + "' has no weights") +
                         " (layers with weights: " + layers + ")");
  }
}

}  // namespace

std::vector<std::string> FrozenLayers(const proto::ModelSpec& spec, const FineTuning& tuning) {
  CheckNamed(spec, tuning.freeze, "--freeze");
  CheckNamed(spec, tuning.train_only, "--train-only");
  std::vector<std::string> frozen = tuning.freeze;
  if (!tuning.train_only.empty())
    for (const proto::Layer& l : spec.layer())
      if (HasParameters(l) && std::find(tuning.train_only.begin(), tuning.train_only.end(),
                                        l.name()) == tuning.train_only.end())
        frozen.push_back(l.name());
  const bool trains = std::any_of(spec.layer().begin(), spec.layer().end(), [&](const auto& l) {
    return HasParameters(l) && std::find(frozen.begin(), frozen.end(), l.name()) == frozen.end();
  });
  if (!trains) throw ModelSpecError("every layer with weights is frozen: nothing would train");
  return frozen;
}

}  // namespace mt
