// The ops backend_ops_bench times, each described independently of the
// backend: its tensors (inputs with host data, outputs to compare, scratch
// sized by the backend), how to run it, and how many enqueues it makes on
// the OpenCL backend. The shapes are LeNet-5's and mentee's
// (core/model/presets.cc) at batch kBatch.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "kernels/backend.h"

namespace mt::kernels::bench {

constexpr int kBatch = 64;

// A tensor an op reads or writes. Inputs carry host data (int32 tensors keep
// their bits in the same 4-byte slots); outputs are compared across backends;
// scratch (the conv workspace) is sized by the backend and neither copied nor
// compared.
struct Tensor {
  enum Role { kInput, kOutput, kScratch };
  std::string name;
  Role role = kInput;
  size_t count = 0;  // for kScratch, set per backend by OpCase::scratch
  bool is_int = false;
  std::vector<float> host;  // kInput only
};

struct OpCase {
  std::string op, shape;
  std::vector<Tensor> tensors;
  // Size of the scratch tensor on a backend (0 if the op has none).
  std::function<size_t(const Backend&)> scratch;
  // Runs the op on views of `tensors`, in order; returns the op's scalar
  // result (the loss), or 0.
  std::function<double(Backend&, const std::vector<View>&)> run;
  // Approximate enqueues the op makes on the OpenCL backend (a function of
  // the backend because a conv's grows with its number of sample groups).
  std::function<int(const Backend&)> launches_on;
};

// Every case, in the order the table lists them.
std::vector<OpCase> AllCases();

}  // namespace mt::kernels::bench
