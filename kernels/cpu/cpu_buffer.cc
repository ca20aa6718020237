#include "kernels/cpu/cpu_buffer.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

namespace mt::kernels {

CpuBuffer::CpuBuffer(Backend* backend, size_t count, std::atomic<size_t>* ledger)
    : Buffer(backend, count), ledger_(ledger) {
  // aligned_alloc wants a multiple of the alignment; an empty buffer still
  // gets one line so data() is never null.
  if (count > (SIZE_MAX - kAlignment) / sizeof(float)) throw std::bad_alloc();
  size_t bytes = count * sizeof(float);
  bytes = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (bytes == 0) bytes = kAlignment;
  data_ = static_cast<float*>(std::aligned_alloc(kAlignment, bytes));
  if (data_ == nullptr) throw std::bad_alloc();
  std::memset(data_, 0, bytes);
  if (ledger_) *ledger_ += count * sizeof(float);
}

CpuBuffer::~CpuBuffer() {
  if (ledger_) *ledger_ -= count() * sizeof(float);
  std::free(data_);
}

}  // namespace mt::kernels
