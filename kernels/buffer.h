// Device memory as seen by the rest of mt: an opaque buffer owned by the
// backend that allocated it, and views (buffer + element offset + count) that
// ops take. Views carry no ownership, so passing them costs nothing.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mt::kernels {

class Backend;

// Elements are 4 bytes: float everywhere, except index buffers (max-pool
// argmax, labels) which hold int32 in the same storage so one allocator serves
// both and OpenCL buffers need no second type.
class Buffer {
 public:
  virtual ~Buffer() = default;
  size_t count() const { return count_; }
  Backend* backend() const { return backend_; }

 protected:
  Buffer(Backend* backend, size_t count) : backend_(backend), count_(count) {}

 private:
  Backend* backend_;
  size_t count_;
};

struct View {
  Buffer* buffer = nullptr;
  size_t offset = 0;  // in elements
  size_t count = 0;   // in elements

  bool empty() const { return buffer == nullptr || count == 0; }
  View Slice(size_t off, size_t n) const { return View{buffer, offset + off, n}; }
};

inline View WholeOf(Buffer& b) { return View{&b, 0, b.count()}; }

}  // namespace mt::kernels
