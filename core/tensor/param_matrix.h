// A matrix among a model's parameters: rows x cols floats, row-major, from
// `begin` (a layer's own offset, or the model's). Dense weights are
// [units][inputs], conv weights [filters][in_c / groups * k * k]. What the
// low-rank encoding of exchanged parameters factors
// (core/compress/segment_codec.h); everything else travels as a vector.
#pragma once

#include <cstddef>

namespace mt {

struct ParamMatrix {
  size_t begin = 0, rows = 0, cols = 0;
};

}  // namespace mt
