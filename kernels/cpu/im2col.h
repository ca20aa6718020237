// Unfolding an image into the column matrix of im2col convolution, and the
// inverse scatter-add used by the input gradient.
#pragma once

#include "kernels/geometry.h"

namespace mt::kernels {

// One sample: col[(c * kernel + ky) * kernel + kx][oy * out_w + ox] =
// in[c][oy * stride - pad + ky][ox * stride - pad + kx], zero outside the
// image. col has patch() rows with row stride ldcol >= out_h * out_w, so
// several samples can sit side by side in one wider matrix.
void Im2Col(const ConvGeometry& g, const float* in, float* col, int ldcol);

// One sample, the adjoint of Im2Col: d_in is overwritten with the sum, over
// every column entry, of the entry added at the pixel it was read from.
void Col2Im(const ConvGeometry& g, const float* col, int ldcol, float* d_in);

}  // namespace mt::kernels
