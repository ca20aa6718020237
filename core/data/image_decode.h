// Decodes PNG and JPEG files, told apart by their first bytes rather than
// their names, row by row: a 50-megapixel photo costs a row of memory, not
// the whole picture. Every error is a DataError naming the file.
#pragma once

#include <cstdint>
#include <string>

#include "core/data/dataset.h"

namespace mt {

// Pictures outside these are refused: a 1x1 placeholder is not a sample,
// and a header claiming 100 megapixels is more likely a decompression bomb
// than a photo (phones shoot up to 50).
constexpr int kMinImageSide = 8;
constexpr int64_t kMaxImagePixels = 64'000'000;

class ImageRowSink {
 public:
  virtual ~ImageRowSink() = default;
  // Once, before the rows: the size of what follows (for a JPEG, possibly
  // already scaled down by the decoder, see DecodeImage) and how it is to
  // be shown: EXIF orientation 1 to 8 (1: as stored; 6: turned 90 degrees
  // clockwise, as a phone held upright stores its photos).
  virtual void Begin(int width, int height, int orientation) = 0;
  // One row of width * channels bytes, top to bottom, channels interleaved.
  virtual void Row(const uint8_t* pixels) = 0;
};

// Decodes `path` into `channels` (1: grey, 3: RGB) whatever the file holds:
// colour, grey, palette, 16 bits and alpha are converted (alpha dropped).
// A JPEG larger than twice (want_width, want_height), as shown, is decoded
// at 1/2, 1/4 or 1/8 of its size by the decoder itself, no smaller than that;
// its EXIF orientation goes to the sink (PNG: always 1).
void DecodeImage(const std::string& path, int channels, int want_width, int want_height,
                 ImageRowSink& sink);

}  // namespace mt
