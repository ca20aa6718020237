#include "core/optim/optimizer_proto.h"

#include <stdexcept>

namespace mt {

proto::OptimizerSettings ToProto(const OptimizerConfig& c) {
  proto::OptimizerSettings s;
  switch (c.kind) {
    case OptimizerKind::kSgd: s.set_kind(proto::OPTIMIZER_SGD); break;
    case OptimizerKind::kAdam: s.set_kind(proto::OPTIMIZER_ADAM); break;
  }
  s.set_lr(c.lr);
  s.set_momentum(c.momentum);
  s.set_weight_decay(c.weight_decay);
  s.set_beta1(c.beta1);
  s.set_beta2(c.beta2);
  s.set_eps(c.eps);
  return s;
}

OptimizerConfig FromProto(const proto::OptimizerSettings& s) {
  OptimizerConfig c;
  switch (s.kind()) {
    case proto::OPTIMIZER_SGD: c.kind = OptimizerKind::kSgd; break;
    case proto::OPTIMIZER_ADAM: c.kind = OptimizerKind::kAdam; break;
    default: throw std::invalid_argument("unknown optimizer kind " + std::to_string(s.kind()));
  }
  c.lr = s.lr();
  c.momentum = s.momentum();
  c.weight_decay = s.weight_decay();
  c.beta1 = s.beta1();
  c.beta2 = s.beta2();
  c.eps = s.eps();
  return c;
}

proto::OptimizerState ToProto(const OptimizerState& state) {
  proto::OptimizerState s;
  *s.mutable_settings() = ToProto(state.config);
  s.set_steps(state.steps);
  s.mutable_slots()->Add(state.slots.begin(), state.slots.end());
  return s;
}

OptimizerState FromProto(const proto::OptimizerState& s) {
  OptimizerState state;
  state.config = FromProto(s.settings());
  state.steps = s.steps();
  state.slots.assign(s.slots().begin(), s.slots().end());
  return state;
}

}  // namespace mt
