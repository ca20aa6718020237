#include "hub/gradient_inbox.h"

#include <algorithm>
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
  non_finite_ = false;
}

std::string GradientInbox::Accept(const proto::GradientChunk& c) {
  if (!expecting_ || complete_)
    return "gradient chunk for step " + std::to_string(c.step()) + " while no gradient is expected";
  if (c.step() != step_)
    return "gradient chunk for step " + std::to_string(c.step()) + ", expected step " +
           std::to_string(step_);
  if (c.offset() != received_)
    return "gradient chunk at offset " + std::to_string(c.offset()) + ", expected " +
           std::to_string(received_);
  size_t bad = 0, n = 0;
  float* dst = grad_.data() + received_;
  if (compression_ == Compression::kNone) {
    n = static_cast<size_t>(c.values_size());
    if (n > wire::kChunkFloats)
      return "gradient chunk of " + std::to_string(n) + " floats exceeds the chunk size";
    if (received_ + n > grad_.size())
      return "gradient longer than the model's " + std::to_string(grad_.size()) + " parameters";
    // Copy and check in one pass over the payload.
    const float* src = c.values().data();
    for (size_t i = 0; i < n; ++i) {
      const float v = src[i];
      dst[i] = v;
      bad += !std::isfinite(v);
    }
  } else {
    // Every chunk but the last is full, so its length follows from its offset.
    if (c.values_size() != 0)
      return "uncompressed gradient values while the run compresses gradients";
    n = std::min<size_t>(wire::kChunkFloats, grad_.size() - received_);
    const std::string why =
        DecodeFloats(compression_, c.packed().data(), c.packed().size(), n, dst);
    if (!why.empty()) {
      expecting_ = false;
      return "gradient chunk at offset " + std::to_string(received_) + ": " + why;
    }
    for (size_t i = 0; i < n; ++i) bad += !std::isfinite(dst[i]);
  }
  if (bad) {
    expecting_ = false;
    non_finite_ = true;
    return "gradient for step " + std::to_string(step_) + " has " + std::to_string(bad) +
           " non-finite values";
  }
  received_ += n;
  if (!c.last()) return "";
  if (received_ != grad_.size()) {
    expecting_ = false;
    return "gradient has " + std::to_string(received_) + " values, the model has " +
           std::to_string(grad_.size());
  }
  if (c.batch() != batch_) {
    expecting_ = false;
    return "gradient computed on " + std::to_string(c.batch()) + " samples, assigned " +
           std::to_string(batch_);
  }
  if (!std::isfinite(c.loss_sum()) || c.loss_sum() < 0 || !std::isfinite(c.compute_ms()) ||
      c.compute_ms() < 0) {
    expecting_ = false;
    non_finite_ = !std::isfinite(c.loss_sum());
    return "step report has a non-finite or negative loss or time";
  }
  loss_sum_ = c.loss_sum();
  compute_ms_ = c.compute_ms();
  has_digest_ = c.has_weights_digest();
  digest_ = c.weights_digest();
  complete_ = true;
  return "";
}

}  // namespace mt
