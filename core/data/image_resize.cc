#include "core/data/image_resize.h"

#include <algorithm>
#include <cmath>

namespace mt {
namespace {

// How much of [a, a + 1) lies in [lo, hi).
double Overlap(int a, double lo, double hi) {
  return std::max(0.0, std::min(a + 1.0, hi) - std::max(static_cast<double>(a), lo));
}

}  // namespace

AreaResizer::AreaResizer(int out_width, int out_height, int channels)
    : out_w_(out_width), out_h_(out_height), channels_(channels) {
  resized_row_.resize(static_cast<size_t>(std::max(out_w_, out_h_)) * channels_);
  sums_.resize(static_cast<size_t>(out_h_) * out_w_ * channels_);
}

void AreaResizer::Begin(int width, int height, int orientation) {
  in_w_ = width;
  in_h_ = height;
  next_row_ = 0;
  orientation_ = orientation >= 1 && orientation <= 8 ? orientation : 1;
  // Orientations 5 to 8 turn a quarter: resize to the transposed size.
  const bool turned = orientation_ >= 5;
  stored_w_ = turned ? out_h_ : out_w_;
  stored_h_ = turned ? out_w_ : out_h_;
  row_scale_ = static_cast<double>(in_h_) / stored_h_;
  std::fill(sums_.begin(), sums_.end(), 0.0f);
  const double scale = static_cast<double>(in_w_) / stored_w_;
  columns_.assign(static_cast<size_t>(stored_w_), Span{});
  column_weights_.clear();
  for (int x = 0; x < stored_w_; ++x) {
    const double lo = x * scale, hi = (x + 1) * scale;
    Span& s = columns_[static_cast<size_t>(x)];
    s.first = std::min(static_cast<int>(std::floor(lo)), in_w_ - 1);
    s.weights = column_weights_.size();
    for (int i = s.first; i < in_w_ && i < hi; ++i, ++s.count)
      column_weights_.push_back(static_cast<float>(Overlap(i, lo, hi) / scale));
  }
}

void AreaResizer::Row(const uint8_t* pixels) {
  if (next_row_ >= in_h_) return;
  const int c = channels_;
  for (int x = 0; x < stored_w_; ++x) {
    const Span& s = columns_[static_cast<size_t>(x)];
    float* out = &resized_row_[static_cast<size_t>(x) * c];
    std::fill(out, out + c, 0.0f);
    for (int k = 0; k < s.count; ++k) {
      const float w = column_weights_[s.weights + static_cast<size_t>(k)];
      const uint8_t* in = pixels + static_cast<size_t>(s.first + k) * c;
      for (int ch = 0; ch < c; ++ch) out[ch] += w * in[ch];
    }
  }
  // The output rows this input row overlaps, each weighted by how much.
  const int y = next_row_++;
  const int first = static_cast<int>(std::floor(y / row_scale_));
  const size_t row_len = static_cast<size_t>(stored_w_) * c;
  for (int oy = std::min(first, stored_h_ - 1); oy < stored_h_; ++oy) {
    const double lo = oy * row_scale_, hi = (oy + 1) * row_scale_;
    if (lo >= y + 1) break;
    const float w = static_cast<float>(Overlap(y, lo, hi) / row_scale_);
    if (w <= 0) continue;
    float* sum = &sums_[static_cast<size_t>(oy) * row_len];
    for (size_t i = 0; i < row_len; ++i) sum[i] += w * resized_row_[i];
  }
}

void AreaResizer::Finish(uint8_t* planar) const {
  const size_t plane = static_cast<size_t>(out_w_) * out_h_;
  const int sw = stored_w_, sh = stored_h_;
  for (int y = 0; y < out_h_; ++y)
    for (int x = 0; x < out_w_; ++x) {
      // Where shown pixel (x, y) is in the stored picture.
      int sx = x, sy = y;
      switch (orientation_) {
        case 2: sx = sw - 1 - x; break;
        case 3: sx = sw - 1 - x, sy = sh - 1 - y; break;
        case 4: sy = sh - 1 - y; break;
        case 5: sx = y, sy = x; break;
        case 6: sx = y, sy = sh - 1 - x; break;
        case 7: sx = sw - 1 - y, sy = sh - 1 - x; break;
        case 8: sx = sw - 1 - y, sy = x; break;
        default: break;
      }
      const size_t from = (static_cast<size_t>(sy) * sw + sx) * channels_;
      const size_t to = static_cast<size_t>(y) * out_w_ + x;
      for (int ch = 0; ch < channels_; ++ch)
        planar[ch * plane + to] =
            static_cast<uint8_t>(std::clamp(std::lround(sums_[from + ch]), 0L, 255L));
    }
}

}  // namespace mt
