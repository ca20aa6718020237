// The optimizer's settings and state as proto messages (train_state.proto):
// the one mapping between them and the in-memory types, used for the wire
// and for checkpoints alike.
#pragma once

#include "core/optim/optimizer.h"
#include "train_state.pb.h"

namespace mt {

proto::OptimizerSettings ToProto(const OptimizerConfig& config);
// Throws std::invalid_argument on an unknown kind.
OptimizerConfig FromProto(const proto::OptimizerSettings& settings);

proto::OptimizerState ToProto(const OptimizerState& state);
OptimizerState FromProto(const proto::OptimizerState& state);

}  // namespace mt
