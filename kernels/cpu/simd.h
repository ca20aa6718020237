// The native float vector of the build target as a GCC/Clang vector type, so
// the hand-blocked kernels compile to AVX-512, AVX2 or NEON from one source.
// Multiply-adds written as `acc += a * b` become FMA instructions because GCC
// and Clang contract them by default.
#pragma once

#include <cstddef>
#include <cstring>
#include <utility>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace mt::kernels::simd {

// kIsa names the vector instructions the kernels were compiled to, for
// reports and --version: a worker's numbers depend on it.
#if defined(__AVX512F__)
inline constexpr int kLanes = 16;
inline constexpr int kRegisters = 32;
inline constexpr const char* kIsa = "avx512";
#elif defined(__AVX__)
inline constexpr int kLanes = 8;
inline constexpr int kRegisters = 16;
inline constexpr const char* kIsa = "avx";
#elif defined(__aarch64__)
inline constexpr int kLanes = 4;
inline constexpr int kRegisters = 32;
inline constexpr const char* kIsa = "neon";
#else
inline constexpr int kLanes = 4;
inline constexpr int kRegisters = 16;
inline constexpr const char* kIsa = "generic";
#endif

typedef float Vec __attribute__((vector_size(kLanes * sizeof(float))));

inline Vec Load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline void Store(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }

namespace detail {
template <size_t... I>
inline Vec Splat(float x, std::index_sequence<I...>) {
  return Vec{(static_cast<void>(I), x)...};
}
}  // namespace detail

// An initializer list rather than a loop: GCC turns a lane-by-lane loop
// inside an unrolled kernel into one masked insert per lane.
inline Vec Splat(float x) { return detail::Splat(x, std::make_index_sequence<kLanes>{}); }

// Pins v to a register. Without it GCC folds a vector load into every FMA
// that uses it, and an operand shared by several FMAs is then loaded once
// per FMA, which makes a kernel load-bound (doubly so when the loads are
// unaligned and split across cache lines).
inline void KeepInRegister(Vec& v) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  asm("" : "+v"(v));
#elif defined(__GNUC__) && defined(__aarch64__)
  asm("" : "+w"(v));
#else
  (void)v;
#endif
}

inline float ReduceAdd(Vec v) {
  float s = 0.0f;
  for (int i = 0; i < kLanes; ++i) s += v[i];
  return s;
}

// Sum of n floats in kLanes independent partial sums: vectorised without
// -ffast-math, and the order (so the result) depends only on n.
inline float Sum(const float* x, int n) {
  Vec s{};
  int i = 0;
  for (; i + kLanes <= n; i += kLanes) s += Load(x + i);
  float tail = 0.0f;
  for (; i < n; ++i) tail += x[i];
  return ReduceAdd(s) + tail;
}

// Copies n floats. Rows of small images are a few dozen floats, where a
// libc memcpy call costs more than the copy; this stays inline.
inline void CopyShort(float* dst, const float* src, int n) {
  int i = 0;
  for (; i + kLanes <= n; i += kLanes) Store(dst + i, Load(src + i));
#if defined(__AVX512F__)
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1u);
    _mm512_mask_storeu_ps(dst + i, m, _mm512_maskz_loadu_ps(m, src + i));
  }
#else
  for (; i < n; ++i) dst[i] = src[i];
#endif
}

// Copies n floats rounded up to whole vectors: reads and writes up to a
// vector past n, for callers whose buffers allow it.
inline void CopyWhole(float* dst, const float* src, int n) {
  for (int i = 0; i < n; i += kLanes) Store(dst + i, Load(src + i));
}

// Copies n floats and writes zeros after them up to the next multiple of
// kLanes, with whole-vector stores only: for rows copied in order into a
// buffer whose gaps must be zero, the overrun lands on gap or on the next
// row, which its own copy then overwrites. (Masked stores are slow on some
// x86 cores; masked loads are not.) Reads no more than n floats.
inline void CopyRowZeroTail(float* dst, const float* src, int n) {
  int i = 0;
  for (; i + kLanes <= n; i += kLanes) Store(dst + i, Load(src + i));
  if (i < n) {
#if defined(__AVX512F__)
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1u);
    Store(dst + i, _mm512_maskz_loadu_ps(m, src + i));
#else
    Vec v{};
    for (int j = 0; j < n - i; ++j) v[j] = src[i + j];
    Store(dst + i, v);
#endif
  }
}

}  // namespace mt::kernels::simd
