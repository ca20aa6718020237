#include "core/optim/optimizer.h"
#include "core/util/byte_io.h"

namespace mt {

std::string OptimizerState::Serialize() const {
  ByteWriter w;
  w.Str(config.kind);
  w.F32(config.lr);
  w.F32(config.momentum);
  w.F32(config.weight_decay);
  w.F32(config.beta1);
  w.F32(config.beta2);
  w.F32(config.eps);
  w.I64(steps);
  w.Floats(slots);
  return std::move(w.bytes());
}

OptimizerState OptimizerState::Parse(const std::string& bytes) {
  try {
    ByteReader r(bytes.data(), bytes.size(), "optimizer state");
    OptimizerState s;
    s.config.kind = r.Str();
    s.config.lr = r.F32();
    s.config.momentum = r.F32();
    s.config.weight_decay = r.F32();
    s.config.beta1 = r.F32();
    s.config.beta2 = r.F32();
    s.config.eps = r.F32();
    s.steps = r.I64();
    s.slots = r.Floats();
    if (r.left() != 0) throw std::invalid_argument("optimizer state: trailing bytes");
    return s;
  } catch (const std::out_of_range& e) {
    throw std::invalid_argument(e.what());
  }
}

}  // namespace mt
