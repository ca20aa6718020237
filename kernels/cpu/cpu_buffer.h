// Host memory for the CPU backend: 64-byte aligned (one cache line, one
// AVX-512 register) so vector loads at the start of a buffer never split.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "kernels/buffer.h"

namespace mt::kernels {

class CpuBuffer : public Buffer {
 public:
  static constexpr size_t kAlignment = 64;

  // Zero-filled, so a buffer read before it is written holds no garbage.
  // Its count * 4 bytes are added to `ledger` (when given) for its lifetime.
  CpuBuffer(Backend* backend, size_t count, std::atomic<size_t>* ledger = nullptr);
  ~CpuBuffer() override;
  CpuBuffer(const CpuBuffer&) = delete;
  CpuBuffer& operator=(const CpuBuffer&) = delete;

  float* data() { return data_; }
  const float* data() const { return data_; }

 private:
  float* data_;
  std::atomic<size_t>* ledger_;
};

}  // namespace mt::kernels
