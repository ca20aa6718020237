// Training-time augmentation of image samples: a random shift within a
// black border (torchvision's RandomCrop with padding) and a left-right
// mirror, drawn from a key that names the sample and the step, so every
// device and every rerun sees the same variant of the same sample.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/data/dataset.h"
#include "core/tensor/shape.h"

namespace mt {

struct Augmentation {
  bool flip = false;     // mirror left-right half the time
  int crop_padding = 0;  // shift up to this many pixels each way; 0: none
  bool any() const { return flip || crop_padding > 0; }
  // "none", "flip", "crop 4", "flip, crop 4": for logs and reports.
  std::string ToString() const;
};

// What --augment asks for: nullopt is auto (on for image folders, off for
// IDX and CIFAR-10 files, whose benchmarks compare against plain samples).
struct AugmentChoice {
  std::optional<bool> flip, crop;  // unset: auto
};
// "auto", "none", "flip", "crop", "flip,crop"; throws std::invalid_argument.
AugmentChoice ParseAugment(const std::string& text);
// The augmentation for samples of `shape`; `photos`: an image folder.
Augmentation ResolveAugment(const AugmentChoice& choice, const Shape& shape, bool photos);

// Augments one normalised sample (C, H, W floats) in place, the border
// black as `scaling` makes pixel 0; allocates nothing.
void Augment(const Augmentation& a, const Shape& shape, uint64_t key, const PixelScaling& scaling,
             float* sample);

}  // namespace mt
