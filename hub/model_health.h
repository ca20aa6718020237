// Whether the master model at the end of a run is worth calling a result:
// a run whose model diverged or was broken (by a hostile worker the
// aggregation did not stop, or by too high a learning rate) must not end
// in a reported success.
#pragma once

#include <string>

#include "core/model/model.h"

namespace mt {

// A test loss this many times that of a uniform guess (ln classes) is not
// a model that learned anything: an honest run starts near 1x and only
// goes down, while weights blown up by a hostile worker give losses in the
// hundreds or more with chance accuracy.
constexpr double kBrokenLossFactor = 10;

// "" when the weights are finite and the final test loss (< 0: not
// evaluated) is finite and below kBrokenLossFactor * ln(classes); else why.
std::string BrokenModelReason(const Model& model, double test_loss, int classes);

}  // namespace mt
