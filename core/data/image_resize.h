// Resizes a picture as its rows arrive (an ImageRowSink for DecodeImage) to
// a model's input, each output pixel the average of the input area it
// covers: no aliasing when a photo shrinks to 32x32, the input exactly when
// the sizes match, and a row of memory however large the picture. The
// picture is resized as stored and turned as its EXIF orientation says at
// the end, on the small result.
#pragma once

#include <cstdint>
#include <vector>

#include "core/data/image_decode.h"

namespace mt {

class AreaResizer : public ImageRowSink {
 public:
  AreaResizer(int out_width, int out_height, int channels);

  void Begin(int width, int height, int orientation) override;
  void Row(const uint8_t* pixels) override;
  // The resized picture, planar (channel, row, column), rounded to bytes.
  // Call after the last row.
  void Finish(uint8_t* planar) const;

 private:
  struct Span {  // the input columns [first, first + count) behind one output column
    int first = 0, count = 0;
    size_t weights = 0;  // offset into column_weights_
  };
  int out_w_, out_h_, channels_;
  int orientation_ = 1;
  int stored_w_ = 0, stored_h_ = 0;  // the resized picture before it is turned
  int in_w_ = 0, in_h_ = 0, next_row_ = 0;
  double row_scale_ = 1;  // input rows per output row
  std::vector<Span> columns_;
  std::vector<float> column_weights_;
  std::vector<float> resized_row_;  // out_w_ * channels_
  std::vector<float> sums_;         // out_h_ * out_w_ * channels_, interleaved
};

}  // namespace mt
