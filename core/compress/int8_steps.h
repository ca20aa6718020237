// The int8 arithmetic that int8 and topk share (gradient_codec.cc,
// topk_codec.cc): a block's scale, a value in whole steps of it, and the
// check of a scale read off the network. Internal to core/compress.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>

#include "core/compress/gradient_codec.h"

namespace mt::int8_steps {

// The step of a block whose largest magnitude is max_abs: max_abs / 127,
// at most kMaxInt8Scale (only for inputs near FLT_MAX, inf or NaN).
inline float ScaleFor(float max_abs) {
  const float scale = max_abs / 127.0f;
  return scale <= kMaxInt8Scale ? scale : kMaxInt8Scale;
}

// v in whole steps of `scale`, rounded to nearest and clamped to +-127. An
// all-zero block (scale 0) encodes as zeros.
inline float Steps(float v, float scale) {
  const float div = scale > 0.0f ? scale : 1.0f;
  float t = std::nearbyint(v / div);
  t = t < 127.0f ? t : 127.0f;  // in this order NaN becomes 127, not UB in the cast
  return t > -127.0f ? t : -127.0f;
}

// "" when a decoded scale is usable, else why, naming the codec and block.
inline std::string ScaleProblem(const char* codec, size_t block, float scale) {
  if (scale >= 0.0f && scale <= kMaxInt8Scale) return "";  // also refuses NaN
  return std::string(codec) + ": block " + std::to_string(block) + " has scale " +
         std::to_string(scale) + " (must be finite, >= 0 and <= FLT_MAX/128)";
}

}  // namespace mt::int8_steps
