// A tensor is a shape over a view of backend memory. It owns nothing: the
// model owns the buffers (one for parameters, one for gradients, one per
// activation), so tensors are cheap to pass and never allocate.
#pragma once

#include "core/tensor/shape.h"
#include "kernels/buffer.h"

namespace mt {

struct Tensor {
  Shape shape;
  kernels::View view;

  int batch() const { return shape[0]; }
  size_t count() const { return shape.count(); }
};

// The first n samples of a batch tensor whose buffer was sized for more.
inline Tensor FirstSamples(const Tensor& t, int n) {
  Tensor r = t;
  r.shape[0] = n;
  r.view.count = r.shape.count();
  return r;
}

}  // namespace mt
