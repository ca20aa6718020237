// Values kept in 16 bits and widened back to floats (table ops,
// kernels/op_table.h): the storage half of mixed precision, for the
// activations a training step keeps for its backward pass
// (core/model/activation_plan.h). Compute stays in floats.
//
// kPackHalves(src, dst, format) rounds src.count floats to nearest even
// (kernels/half_float.h) into dst, two values per 4-byte element (the first
// in the low half), so dst.count >= HalfElements(src.count).
// kUnpackHalves(src, dst, format) widens the first dst.count values of src
// into dst. Both are element-wise, so a batch's values come back the same
// whatever the thread count or the vector width; bf16 widening is exact,
// fp16 clamps at +-65504 (never inf) and keeps NaN a NaN. The CPU's are in
// kernels/cpu/ops/half_storage.cc; a backend without them keeps its
// activations in floats.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/buffer.h"
#include "kernels/op_table.h"

namespace mt::kernels {

enum class HalfFormat : uint8_t {
  kBf16,  // a float's upper half: its range, 8 bits of mantissa
  kFp16,  // IEEE half: 11 bits of mantissa, values up to 65504
};

// 4-byte elements that hold `values` 16-bit values.
constexpr size_t HalfElements(size_t values) { return (values + 1) / 2; }

inline const TableOp<void(View, View, HalfFormat)> kPackHalves{"pack_halves"};
inline const TableOp<void(View, View, HalfFormat)> kUnpackHalves{"unpack_halves"};

}  // namespace mt::kernels
