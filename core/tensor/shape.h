// Tensor shapes: up to four dimensions, NCHW for images, [N][features] for
// dense activations. Per-sample shapes leave out N.
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <stdexcept>
#include <string>

namespace mt {

class Shape {
 public:
  static constexpr int kMaxRank = 4;

  Shape() = default;
  Shape(std::initializer_list<int> dims) {
    if (dims.size() > kMaxRank) throw std::invalid_argument("Shape: rank above 4");
    for (int d : dims) dims_[rank_++] = d;
  }

  int rank() const { return rank_; }
  int operator[](int i) const { return dims_[i]; }
  int& operator[](int i) { return dims_[i]; }

  size_t count() const {
    size_t n = 1;
    for (int i = 0; i < rank_; ++i) n *= static_cast<size_t>(dims_[i]);
    return n;
  }

  // This shape with a leading batch dimension.
  Shape WithBatch(int n) const {
    Shape s;
    s.rank_ = rank_ + 1;
    s.dims_[0] = n;
    for (int i = 0; i < rank_; ++i) s.dims_[i + 1] = dims_[i];
    return s;
  }

  bool operator==(const Shape& o) const {
    if (rank_ != o.rank_) return false;
    for (int i = 0; i < rank_; ++i)
      if (dims_[i] != o.dims_[i]) return false;
    return true;
  }
  bool operator!=(const Shape& o) const { return !(*this == o); }

  std::string ToString() const {
    std::string s;
    for (int i = 0; i < rank_; ++i) s += (i ? "x" : "") + std::to_string(dims_[i]);
    return s.empty() ? "scalar" : s;
  }

 private:
  std::array<int, kMaxRank> dims_{};
  int rank_ = 0;
};

}  // namespace mt
