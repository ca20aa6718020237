// Row-major single-precision GEMM on Eigen's GEBP kernel, serial and split
// over the pool. The packing buffers come from the caller, so no product
// ever allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace mt::kernels {

class ThreadPool;

// Floats of packing scratch GemmSerial needs for an m x n x k product. It
// never decreases when m, n or k grows, so scratch sized for a product also
// serves every smaller one.
size_t GemmScratchFloats(int m, int n, int k);

// c = alpha * op(a) * op(b) + beta * c on the calling thread, where op(a) is
// m x k (a stored k x m when trans_a), op(b) is k x n, and lda/ldb/ldc are the
// row strides of the matrices as stored. With beta == 0, c is never read, so
// it may hold garbage. scratch holds GemmScratchFloats(m, n, k) floats, at
// any alignment.
void GemmSerial(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                int lda, const float* b, int ldb, float beta, float* c, int ldc, float* scratch);

// Per-chunk packing scratch for Gemm, grown to the largest product seen, so
// a training step allocates only the first time it runs.
class GemmScratch {
 public:
  // Grows chunk's buffer to at least `floats` and returns it.
  float* Reserve(int chunk, size_t floats);
  // A buffer already reserved.
  float* Get(int chunk) const { return buffers_[chunk].get(); }

 private:
  struct Free {
    void operator()(float* p) const;
  };
  std::vector<std::unique_ptr<float, Free>> buffers_;
  std::vector<size_t> sizes_;
};

// The same on densely packed matrices, split over the pool by rows of c (or
// by columns when c has too few rows) when the product is big enough to pay
// for waking the helpers. Not reentrant on one `scratch`.
void Gemm(ThreadPool& pool, GemmScratch& scratch, bool trans_a, bool trans_b, int m, int n, int k,
          float alpha, const float* a, const float* b, float beta, float* c);

}  // namespace mt::kernels
