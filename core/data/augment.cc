#include "core/data/augment.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "core/data/dataset.h"
#include "core/util/rng.h"

namespace mt {

std::string Augmentation::ToString() const {
  std::string s = flip ? "flip" : "";
  if (crop_padding > 0) s += (s.empty() ? "crop " : ", crop ") + std::to_string(crop_padding);
  return s.empty() ? "none" : s;
}

AugmentChoice ParseAugment(const std::string& text) {
  if (text == "auto") return {};
  AugmentChoice c{false, false};
  if (text == "none") return c;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string part = text.substr(at, comma - at);
    if (part == "flip")
      c.flip = true;
    else if (part == "crop")
      c.crop = true;
    else
      throw std::invalid_argument("'" + part + "' is not one of auto, none, flip, crop, flip,crop");
    at = comma + 1;
  }
  return c;
}

Augmentation ResolveAugment(const AugmentChoice& choice, const Shape& shape, bool photos) {
  Augmentation a;
  a.flip = choice.flip.value_or(photos);
  // torchvision's CIFAR recipe pads 32x32 by 4: an eighth of the side.
  if (choice.crop.value_or(photos)) a.crop_padding = std::max(1, std::min(shape[1], shape[2]) / 8);
  return a;
}

void Augment(const Augmentation& a, const Shape& shape, uint64_t key, const PixelScaling& scaling,
             float* sample) {
  if (!a.any()) return;
  Rng rng(key);
  const int c = shape[0], h = shape[1], w = shape[2], p = a.crop_padding;
  const bool flip = a.flip && (rng.Next() >> 63);
  const int dy = p > 0 ? static_cast<int>(rng.Below(2 * p + 1)) - p : 0;
  const int dx = p > 0 ? static_cast<int>(rng.Below(2 * p + 1)) - p : 0;
  const size_t row = static_cast<size_t>(w);
  for (int ch = 0; ch < c; ++ch) {
    float* plane = sample + static_cast<size_t>(ch) * h * w;
    const float black = scaling.offset[ch];
    // out(y, x) = in(y + dy, x + dx), black outside: rows are visited in the
    // order that reads each source row before it is overwritten.
    if (dx != 0 || dy != 0) {
      for (int i = 0; i < h; ++i) {
        const int y = dy > 0 ? i : h - 1 - i;
        float* out = plane + y * row;
        const int sy = y + dy;
        if (sy < 0 || sy >= h) {
          std::fill(out, out + w, black);
          continue;
        }
        const int x0 = std::max(0, -dx), x1 = std::min(w, w - dx);  // out columns with a source
        std::memmove(out + x0, plane + sy * row + x0 + dx, sizeof(float) * (x1 - x0));
        std::fill(out, out + x0, black);
        std::fill(out + x1, out + w, black);
      }
    }
    if (flip)
      for (int y = 0; y < h; ++y) std::reverse(plane + y * row, plane + (y + 1) * row);
  }
}

}  // namespace mt
