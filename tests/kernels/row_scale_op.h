// The keys of the row scale, a table op (kernels/op_table.h) whose kernel is
// kernels/cpu/ops/row_scale.cc; the mul layer holds the same two.
#pragma once

#include "kernels/op_table.h"

namespace mt::kernels::test_support {

// (x, scale, out, rows, inner)
inline const TableOp<void(View, View, View, int, int)> kRowScaleForward{"row_scale_forward"};
// (x, scale, d_out, d_x, d_scale, rows, inner)
inline const TableOp<void(View, View, View, View, View, int, int)> kRowScaleBackward{
    "row_scale_backward"};

}  // namespace mt::kernels::test_support
