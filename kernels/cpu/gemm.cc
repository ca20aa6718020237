#include "kernels/cpu/gemm.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>

// GCC 12 flags _mm512_undefined_ps() inside Eigen's AVX-512 transposes as
// (maybe) uninitialized where they are inlined (so for the whole file); the
// value is deliberately undefined and unused. Eigen's AVX2 code has an unused
// variable of its own.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-variable"
#include <Eigen/Core>
#pragma GCC diagnostic pop

#include "kernels/cpu/thread_pool.h"

namespace mt::kernels {
namespace {

// Eigen's product expressions (Map<RowMajor> a * b with noalias) allocate
// their packing buffers on the heap, on every call, once those exceed 128 KiB.
// So products go straight to the GEBP driver those expressions end up in,
// general_matrix_matrix_product, with a blocking object whose buffers the
// caller owns.
using Eigen::Index;

// Cache blocking, chosen here rather than by Eigen's heuristic so the buffer
// sizes are simple, monotone functions of the shape (see GemmScratchFloats).
// The packed lhs block (kc x mc) should stay in L2 and the rhs block
// (kc x nc) in L2/L3; small products fit whole, as Eigen would choose too.
// On 512^3 and 1000^3 products these match Eigen's own choice within 2%.
constexpr Index kMaxKc = 512;
constexpr Index kLhsBlockFloats = Index{1} << 17;  // 512 KiB
constexpr Index kRhsBlockFloats = Index{1} << 17;  // 512 KiB

struct BlockSizes {
  Index kc, mc, nc;
};

// Eigen runs a row-major m x n result as the column-major transpose, so its
// "rows" (mc) are our n and its "cols" (nc) our m.
BlockSizes BlockingFor(int m, int n, int k) {
  BlockSizes s;
  s.kc = std::min<Index>(k, kMaxKc);
  s.mc = std::min<Index>(n, std::max<Index>(1, kLhsBlockFloats / s.kc));
  s.nc = std::min<Index>(m, std::max<Index>(1, kRhsBlockFloats / s.kc));
  return s;
}

size_t RoundUp16(Index x) { return (static_cast<size_t>(x) + 15) & ~size_t{15}; }

class Blocking : public Eigen::internal::level3_blocking<float, float> {
 public:
  Blocking(const BlockSizes& s, float* a, float* b) {
    this->m_kc = s.kc;
    this->m_mc = s.mc;
    this->m_nc = s.nc;
    this->m_blockA = a;
    this->m_blockB = b;
  }
};

template <int LhsOrder, int RhsOrder>
void RunGebp(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
             float* c, int ldc, float* scratch) {
  const BlockSizes s = BlockingFor(m, n, k);
  // Eigen reads the packed panels with aligned vector loads.
  float* base =
      reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(scratch) + 63) & ~uintptr_t{63});
  Blocking blocking(s, base, base + RoundUp16(s.kc * s.mc));
  Eigen::internal::general_matrix_matrix_product<Index, float, LhsOrder, false, float, RhsOrder,
                                                 false, Eigen::RowMajor, 1>::run(m, n, k, a, lda, b,
                                                                                 ldb, c, 1, ldc,
                                                                                 alpha, blocking);
}

// Below this many multiply-adds a product finishes in a few microseconds,
// about what waking the helpers and splitting Eigen's packing costs.
constexpr int64_t kParallelMacs = 1 << 17;
// Each part should still give Eigen a full register tile to work on.
constexpr int kMinPartRows = 16;

}  // namespace

size_t GemmScratchFloats(int m, int n, int k) {
  if (m <= 0 || n <= 0 || k <= 0) return 0;
  const BlockSizes s = BlockingFor(m, n, k);
  // 16 more for aligning an arbitrary pointer to 64 bytes.
  return RoundUp16(s.kc * s.mc) + RoundUp16(s.kc * s.nc) + 16;
}

void GemmSerial(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                int lda, const float* b, int ldb, float beta, float* c, int ldc, float* scratch) {
  if (m <= 0 || n <= 0) return;
  // GEBP accumulates into c, so beta is applied first; with beta == 0 the
  // old contents (possibly NaN) are overwritten, never read.
  using CMap = Eigen::Map<Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>,
                          Eigen::Unaligned, Eigen::OuterStride<>>;
  CMap cm(c, m, n, Eigen::OuterStride<>(ldc));
  if (beta == 0.0f) {
    cm.setZero();
  } else if (beta != 1.0f) {
    cm *= beta;
  }
  if (k <= 0 || alpha == 0.0f) return;
  // op(a) stored transposed is op(a) in column-major order, and so for b.
  if (!trans_a && !trans_b) {
    RunGebp<Eigen::RowMajor, Eigen::RowMajor>(m, n, k, alpha, a, lda, b, ldb, c, ldc, scratch);
  } else if (!trans_a && trans_b) {
    RunGebp<Eigen::RowMajor, Eigen::ColMajor>(m, n, k, alpha, a, lda, b, ldb, c, ldc, scratch);
  } else if (trans_a && !trans_b) {
    RunGebp<Eigen::ColMajor, Eigen::RowMajor>(m, n, k, alpha, a, lda, b, ldb, c, ldc, scratch);
  } else {
    RunGebp<Eigen::ColMajor, Eigen::ColMajor>(m, n, k, alpha, a, lda, b, ldb, c, ldc, scratch);
  }
}

void GemmScratch::Free::operator()(float* p) const { std::free(p); }

float* GemmScratch::Reserve(int chunk, size_t floats) {
  if (static_cast<size_t>(chunk) >= buffers_.size()) {
    buffers_.resize(chunk + 1);
    sizes_.resize(chunk + 1, 0);
  }
  if (floats > sizes_[chunk] || !buffers_[chunk]) {
    const size_t bytes = (std::max<size_t>(floats, 16) * sizeof(float) + 63) / 64 * 64;
    float* p = static_cast<float*>(std::aligned_alloc(64, bytes));
    if (p == nullptr) throw std::bad_alloc();
    buffers_[chunk].reset(p);
    sizes_[chunk] = floats;
  }
  return buffers_[chunk].get();
}

void Gemm(ThreadPool& pool, GemmScratch& scratch, bool trans_a, bool trans_b, int m, int n, int k,
          float alpha, const float* a, const float* b, float beta, float* c) {
  const int lda = trans_a ? m : k;
  const int ldb = trans_b ? k : n;
  const int64_t macs = int64_t{m} * n * k;
  const int threads = pool.size();
  if (threads == 1 || macs < kParallelMacs || (m < 2 && n < 2)) {
    float* s = scratch.Reserve(0, GemmScratchFloats(m, n, k));
    GemmSerial(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, n, s);
    return;
  }
  // Rows first, even though each part then packs all of b: the rows of a
  // layer's activations are samples, which the previous ops split the same
  // way, so each thread reads rows its own core wrote. Splitting fc layers by
  // columns instead was 20-60% slower on two cores.
  const bool by_rows = m >= threads * kMinPartRows || m >= n;
  const int64_t parts = by_rows ? m : n;
  const int chunks = static_cast<int>(std::min<int64_t>(parts, threads));
  // Chunks differ by at most one row (or column), and the scratch size is
  // monotone, so the widest chunk's size serves them all.
  const int64_t widest = (parts + chunks - 1) / chunks;
  const size_t floats = by_rows ? GemmScratchFloats(static_cast<int>(widest), n, k)
                                : GemmScratchFloats(m, static_cast<int>(widest), k);
  for (int ch = 0; ch < chunks; ++ch) scratch.Reserve(ch, floats);
  if (by_rows) {
    pool.ParallelFor(m, [&](int64_t r0, int64_t r1, int chunk) {
      const float* ap = trans_a ? a + r0 : a + r0 * lda;
      GemmSerial(trans_a, trans_b, static_cast<int>(r1 - r0), n, k, alpha, ap, lda, b, ldb, beta,
                 c + r0 * n, n, scratch.Get(chunk));
    });
  } else {
    pool.ParallelFor(n, [&](int64_t c0, int64_t c1, int chunk) {
      const float* bp = trans_b ? b + c0 * ldb : b + c0;
      GemmSerial(trans_a, trans_b, m, static_cast<int>(c1 - c0), k, alpha, a, lda, bp, ldb, beta,
                 c + c0, n, scratch.Get(chunk));
    });
  }
}

}  // namespace mt::kernels
