#include "hub/aggregation/gradient_inbox.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "core/compress/gradient_codec.h"
#include "proto/wire.h"
#include "wire/compression_proto.h"

namespace mt {

void GradientInbox::Expect(int64_t step, int batch) {
  if (grad_.size() != param_count_) grad_.assign(param_count_, 0.0f);  // once
  step_ = step;
  batch_ = batch;
  next_ = 0;
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
  const wire::Segment& seg = segments_[next_];
  if (c.offset() != seg.begin)
    return "gradient chunk at offset " + std::to_string(c.offset()) + ", expected " +
           std::to_string(seg.begin);
  const size_t n = seg.size();
  size_t bad = 0;
  float* dst = grad_.data() + seg.begin;
  if (masked_ || c.masked_size() > 0) {
    if (!masked_ || c.values_size() != 0 || !c.packed().empty() ||
        static_cast<size_t>(c.masked_size()) != n)
      return "gradient chunk at offset " + std::to_string(c.offset()) +
             (masked_ ? " must carry its segment's values masked, and only those (secure "
                        "aggregation)"
                      : " is masked, but this hub does not run secure aggregation");
    // The ring's bits, uniform: nothing to check until they are unmasked.
    std::memcpy(dst, c.masked().data(), n * sizeof(float));
  } else if (c.packed().empty() && n > 0) {
    if (c.compression() != proto::COMPRESSION_NONE)
      return "gradient chunk at offset " + std::to_string(c.offset()) + " is encoded as " +
             std::to_string(static_cast<int>(c.compression())) + " but carries no bytes";
    if (static_cast<size_t>(c.values_size()) != n)
      return "gradient chunk at offset " + std::to_string(c.offset()) + " has " +
             std::to_string(c.values_size()) + " floats, its segment " + std::to_string(n);
    // Copy and check in one pass over the payload.
    const float* src = c.values().data();
    for (size_t i = 0; i < n; ++i) {
      const float v = src[i];
      dst[i] = v;
      bad += !std::isfinite(v);
    }
  } else {
    if (c.values_size() != 0)
      return "gradient chunk at offset " + std::to_string(c.offset()) +
             " carries both floats and encoded bytes";
    Compression encoding;
    try {
      encoding = FromProto(c.compression());
    } catch (const std::invalid_argument& e) {
      expecting_ = false;
      return "gradient chunk at offset " + std::to_string(seg.begin) + ": " + e.what();
    }
    const std::string why =
        codecs_[next_].Decode(encoding, c.packed().data(), c.packed().size(), dst);
    if (!why.empty()) {
      expecting_ = false;
      return "gradient chunk at offset " + std::to_string(seg.begin) + ": " + why;
    }
    for (size_t i = 0; i < n; ++i) bad += !std::isfinite(dst[i]);
  }
  if (bad) {
    expecting_ = false;
    non_finite_ = true;
    return "gradient for step " + std::to_string(step_) + " has " + std::to_string(bad) +
           " non-finite values";
  }
  ++next_;
  const bool whole = next_ == segments_.size();
  if (c.last() != whole) {
    expecting_ = false;
    return whole ? "gradient's last segment (offset 0) is not marked last"
                 : "gradient marked last after " + std::to_string(next_) + " of " +
                       std::to_string(segments_.size()) + " segments";
  }
  if (!whole) return "";
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
  // Only advice for --sync-every auto: a nonsensical value is ignored.
  exchange_ms_ = std::isfinite(c.exchange_ms()) && c.exchange_ms() > 0 ? c.exchange_ms() : 0;
  has_digest_ = c.has_weights_digest();
  digest_ = c.weights_digest();
  complete_ = true;
  return "";
}

}  // namespace mt
