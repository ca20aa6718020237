#include "hub/gradient_inbox.h"

#include <cmath>

#include "proto/wire.h"

namespace mt {

void GradientInbox::Expect(int64_t step, int batch) {
  step_ = step;
  batch_ = batch;
  received_ = 0;
  expecting_ = true;
  complete_ = false;
  has_digest_ = false;
}

std::string GradientInbox::Accept(const proto::GradientChunk& c) {
  if (!expecting_ || complete_)
    return "gradient chunk for step " + std::to_string(c.step()) + " while no gradient is expected";
  if (c.step() != step_)
    return "gradient chunk for step " + std::to_string(c.step()) + ", expected step " + std::to_string(step_);
  if (c.offset() != received_)
    return "gradient chunk at offset " + std::to_string(c.offset()) + ", expected " + std::to_string(received_);
  const size_t n = static_cast<size_t>(c.values_size());
  if (n > wire::kChunkFloats) return "gradient chunk of " + std::to_string(n) + " floats exceeds the chunk size";
  if (received_ + n > grad_.size())
    return "gradient longer than the model's " + std::to_string(grad_.size()) + " parameters";
  // Copy and check in one pass over the payload.
  const float* src = c.values().data();
  float* dst = grad_.data() + received_;
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    const float v = src[i];
    dst[i] = v;
    bad += !std::isfinite(v);
  }
  if (bad) {
    expecting_ = false;
    return "gradient for step " + std::to_string(step_) + " has " + std::to_string(bad) + " non-finite values";
  }
  received_ += n;
  if (!c.last()) return "";
  if (received_ != grad_.size()) {
    expecting_ = false;
    return "gradient has " + std::to_string(received_) + " values, the model has " + std::to_string(grad_.size());
  }
  if (c.batch() != batch_) {
    expecting_ = false;
    return "gradient computed on " + std::to_string(c.batch()) + " samples, assigned " + std::to_string(batch_);
  }
  if (!std::isfinite(c.loss_sum()) || c.loss_sum() < 0 || !std::isfinite(c.compute_ms()) || c.compute_ms() < 0) {
    expecting_ = false;
    return "step report has a non-finite or negative loss or time";
  }
  loss_sum_ = c.loss_sum();
  compute_ms_ = c.compute_ms();
  has_digest_ = c.has_digest();
  digest_ = c.weights_digest();
  complete_ = true;
  return "";
}

}  // namespace mt
