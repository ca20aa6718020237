// The table of cases tests/kernels/backend_ops_test.cc runs on every backend
// and tests/bench/backend_ops_bench times (one table: a new op is a row
// here), and the harness a case runs in. A case builds its inputs from seeded random
// data on the backend it is given, calls its op (after the ops that op
// depends on, such as a forward pass before its backward one) and keeps what
// it wrote.
//
// Every buffer has a few elements on either side of the view an op gets and
// is read back whole, so every op runs on views at non-zero offsets and a
// write outside its view shows up as a mismatch. Outputs start as garbage, so an
// op that must overwrite cannot pass by leaving them alone.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/backend.h"
#include "tests/kernels/cpu_test_util.h"

namespace mt::kernels::test_support {

// What a case wrote, as 32-bit patterns (int32 outputs are never rounded, so
// they compare exactly whatever the op's tolerance).
struct Output {
  std::string name;
  std::vector<float> data;
  bool integers = false;
};

// The buffers of one case on one backend, and the outputs it keeps.
class CaseIo {
 public:
  explicit CaseIo(Backend& backend) : backend_(backend) {}
  Backend& be() { return backend_; }

  View Random(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
    return Padded(RandomVector(kPad + n + kPad, seed, lo, hi));
  }
  View Ints(std::vector<int32_t> values) {
    values.insert(values.begin(), kPad, -1);
    values.insert(values.end(), kPad, -1);
    std::vector<float> bits(values.size());
    std::memcpy(bits.data(), values.data(), values.size() * sizeof(int32_t));
    return Padded(bits);
  }
  View Workspace(size_t n) {
    buffers_.push_back(backend_.Allocate(n));
    return WholeOf(*buffers_.back());
  }
  // Keeps the whole buffer behind `v`, padding included.
  void Keep(const char* name, View v, bool integers = false) {
    kept_.push_back(WholeOf(*v.buffer));
    Output out{name, std::vector<float>(v.buffer->count()), integers};
    backend_.Download(WholeOf(*v.buffer), out.data.data());
    outputs_.push_back(std::move(out));
  }
  void KeepValue(const char* name, double value) {
    outputs_.push_back(Output{name, {static_cast<float>(value)}});
  }
  std::vector<Output> TakeOutputs() { return std::move(outputs_); }
  // The buffers the case filled from the host and those it kept, for the
  // bench's cost of moving them (tests/bench/backend_ops_run.cc).
  const std::vector<std::pair<View, std::vector<float>>>& uploads() const { return uploads_; }
  const std::vector<View>& kept() const { return kept_; }

 private:
  static constexpr size_t kPad = 3;

  View Padded(const std::vector<float>& host) {
    buffers_.push_back(backend_.Allocate(host.size()));
    backend_.Upload(host.data(), WholeOf(*buffers_.back()));
    uploads_.emplace_back(WholeOf(*buffers_.back()), host);
    return WholeOf(*buffers_.back()).Slice(kPad, host.size() - 2 * kPad);
  }

  Backend& backend_;
  std::vector<std::unique_ptr<Buffer>> buffers_;
  std::vector<Output> outputs_;
  std::vector<std::pair<View, std::vector<float>>> uploads_;
  std::vector<View> kept_;
};

struct OpCase {
  Op op;              // the op under test
  OpSet uses;         // every op the case calls: op and what it needs first
  std::string shape;  // what this case varies, for messages
  std::function<void(CaseIo&)> run;

  std::string Name() const { return std::string(OpName(op)) + " " + shape; }
};

class Table {
 public:
  void Add(Op op, std::string shape, std::function<void(CaseIo&)> run, OpSet also = {}) {
    cases_.push_back(OpCase{op, OpSet{op} | also, std::move(shape), std::move(run)});
  }
  std::vector<OpCase> Take() { return std::move(cases_); }

 private:
  std::vector<OpCase> cases_;
};

inline std::string Dims(std::initializer_list<int> dims) {
  std::string s;
  for (int d : dims) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

inline void AddLinearAlgebra(Table& t) {
  struct GemmShape {
    int m, n, k;
  };
  // LeNet's and mentee's dense layers at batch 64, their conv GEMMs, odd and degenerate shapes.
  for (const GemmShape s : std::vector<GemmShape>{{64, 120, 400},
                                                  {64, 84, 120},
                                                  {64, 10, 84},
                                                  {6, 784, 25},
                                                  {16, 100, 150},
                                                  {32, 1024, 27},
                                                  {64, 256, 2048},
                                                  {7, 5, 3},
                                                  {1, 1, 1},
                                                  {1, 13, 17},
                                                  {33, 1, 9}}) {
    for (int tr = 0; tr < 4; ++tr) {
      const bool ta = tr & 1, tb = tr & 2;
      t.Add(Op::kGemm, Dims({s.m, s.n, s.k}) + (ta ? " a^T" : "") + (tb ? " b^T" : ""),
            [s, ta, tb, tr](CaseIo& io) {
              const View a = io.Random(size_t(s.m) * s.k, 10 + tr),
                         b = io.Random(size_t(s.k) * s.n, 20 + tr);
              const View c = io.Random(size_t(s.m) * s.n, 30 + tr);
              io.be().Gemm(ta, tb, s.m, s.n, s.k, 0.7f, a, b, 0.3f, c);
              io.Keep("c", c);
            });
    }
  }
  for (size_t n : {size_t(1), size_t(37), size_t(100000)}) {
    t.Add(Op::kAxpy, Dims({int(n)}), [n](CaseIo& io) {
      const View y = io.Random(n, 2);
      io.be().Axpy(0.5f, io.Random(n, 1), y);
      io.Keep("y", y);
    });
    t.Add(Op::kScale, Dims({int(n)}), [n](CaseIo& io) {
      const View x = io.Random(n, 3);
      io.be().Scale(-3.0f, x);
      io.Keep("x", x);
    });
  }
}

inline void AddConvolutions(Table& t) {
  struct ConvCase {
    const char* name;
    ConvGeometry g;
  };
  // {batch, in_c, in_h, in_w, out_c, kernel, stride, pad}. The last one is
  // mentee's second conv at a batch that needs more columns than the OpenCL
  // workspace cap holds, so it runs in groups, the last one partial.
  for (const ConvCase& cc : std::vector<ConvCase>{
           {"lenet_conv1", {8, 1, 28, 28, 6, 5, 1, 2}},
           {"lenet_conv2", {8, 6, 14, 14, 16, 5, 1, 0}},
           {"mentee_conv1", {2, 3, 32, 32, 32, 3, 1, 1}},
           {"odd_sizes", {3, 5, 9, 7, 3, 3, 1, 0}},
           {"stride2_pad1", {2, 4, 11, 10, 5, 3, 2, 1}},
           {"stride2_even", {2, 2, 8, 8, 4, 2, 2, 0}},
           {"stride3_k5_pad2", {2, 3, 13, 12, 2, 5, 3, 2}},
           {"k1_stride2", {2, 3, 7, 7, 4, 1, 2, 0}},
           {"batch1", {1, 2, 6, 5, 3, 3, 1, 1}},
           {"mentee_conv2_in_groups", {14, 32, 32, 32, 32, 3, 1, 1}},
       }) {
    const ConvGeometry g = cc.g;
    const size_t in_n = size_t(g.batch) * g.in_size(), out_n = size_t(g.batch) * g.out_size();
    for (const bool first_layer : {false, true}) {
      // A first layer: no bias on the way forward, no input or bias gradient back.
      const std::string shape = std::string(cc.name) + (first_layer ? " without bias or d_in" : "");
      t.Add(Op::kConv2dForward, shape, [g, in_n, out_n, first_layer](CaseIo& io) {
        const View out = io.Random(out_n, 4);
        io.be().Conv2dForward(g, io.Random(in_n, 1), io.Random(g.weight_count(), 2),
                              first_layer ? View{} : io.Random(g.out_c, 3), out,
                              io.Workspace(io.be().ConvWorkspaceCount(g)));
        io.Keep("out", out);
      });
      t.Add(Op::kConv2dBackward, shape, [g, in_n, out_n, first_layer](CaseIo& io) {
        const View d_in = io.Random(in_n, 5), d_w = io.Random(g.weight_count(), 6),
                   d_b = io.Random(g.out_c, 7);
        io.be().Conv2dBackward(g, io.Random(in_n, 1), io.Random(g.weight_count(), 2),
                               io.Random(out_n, 8), first_layer ? View{} : d_in, d_w,
                               first_layer ? View{} : d_b,
                               io.Workspace(io.be().ConvWorkspaceCount(g)));
        io.Keep("d_weight", d_w);
        io.Keep("d_in", d_in);
        io.Keep("d_bias", d_b);
      });
    }
  }
  // Grouped and depthwise (groups > 1): {batch, in_c, in_h, in_w, out_c,
  // kernel, stride, pad, groups}, forward and backward in one case; "frozen"
  // passes no d_weight, so d_bias must stay as it was.
  for (const ConvCase& cc : std::vector<ConvCase>{
           {"depthwise", {4, 16, 16, 16, 16, 3, 1, 1, 16}},
           {"depthwise_stride2", {3, 8, 15, 16, 8, 3, 2, 1, 8}},
           {"depthwise_k5_multiplier2", {2, 6, 9, 11, 12, 5, 1, 2, 6}},
           {"grouped", {2, 8, 9, 9, 12, 3, 2, 1, 4}},
       }) {
    const ConvGeometry g = cc.g;
    const size_t in_n = size_t(g.batch) * g.in_size(), out_n = size_t(g.batch) * g.out_size();
    for (const bool frozen : {false, true}) {
      const std::string shape = std::string(cc.name) + (frozen ? " frozen" : "");
      t.Add(
          Op::kGroupedConv2d, shape,
          [g, in_n, out_n, frozen](CaseIo& io) {
            const View w = io.Random(g.weight_count(), 2), in = io.Random(in_n, 1);
            const View ws = io.Workspace(io.be().ConvWorkspaceCount(g));
            const View out = io.Random(out_n, 4);
            io.be().Conv2dForward(g, in, w, io.Random(g.out_c, 3), out, ws);
            const View d_in = io.Random(in_n, 5), d_w = io.Random(g.weight_count(), 6),
                       d_b = io.Random(g.out_c, 7);
            io.be().Conv2dBackward(g, in, w, io.Random(out_n, 8), d_in, frozen ? View{} : d_w, d_b,
                                   ws);
            io.Keep("out", out);
            io.Keep("d_in", d_in);
            io.Keep("d_weight", d_w);
            io.Keep("d_bias", d_b);
          },
          OpSet{Op::kConv2dForward, Op::kConv2dBackward});
    }
  }
}

inline void AddPooling(Table& t) {
  // {batch, channels, in_h, in_w, size, stride}: LeNet's, odd sizes, overlapping windows, one
  // window.
  for (const PoolGeometry g : std::vector<PoolGeometry>{{8, 6, 28, 28, 2, 2},
                                                        {8, 16, 10, 10, 2, 2},
                                                        {1, 3, 7, 9, 2, 2},
                                                        {2, 2, 9, 9, 3, 2},
                                                        {2, 2, 6, 7, 3, 1},
                                                        {1, 1, 5, 5, 5, 5}}) {
    const size_t in_n = size_t(g.batch) * g.in_size(), out_n = size_t(g.batch) * g.out_size();
    const std::string shape = Dims({g.batch, g.channels, g.in_h, g.in_w}) + " size " +
                              std::to_string(g.size) + " stride " + std::to_string(g.stride);
    t.Add(Op::kMaxPoolForward, shape, [g, in_n, out_n](CaseIo& io) {
      const View out = io.Random(out_n, 12), argmax = io.Random(out_n, 13);
      io.be().MaxPoolForward(g, io.Random(in_n, 11), out, argmax);
      io.Keep("out", out);
      io.Keep("argmax", argmax, true);
    });
    t.Add(Op::kMaxPoolBackward, shape,
          [g, in_n, out_n](CaseIo& io) {
            const View argmax = io.Random(out_n, 13), d_in = io.Random(in_n, 15);
            io.be().MaxPoolForward(g, io.Random(in_n, 11), io.Random(out_n, 12), argmax);
            io.be().MaxPoolBackward(g, io.Random(out_n, 14), argmax, d_in);
            io.Keep("d_in", d_in);
          },
          {Op::kMaxPoolForward});
  }
}

inline void AddElementwise(Table& t) {
  struct BiasShape {
    int outer, channels, inner;
  };
  // Dense layers' layout (inner 1) and conv layers'.
  for (const BiasShape s :
       std::vector<BiasShape>{{64, 120, 1}, {3, 7, 1}, {64, 6, 784}, {1, 5, 9}, {5, 3, 1000}}) {
    const size_t n = size_t(s.outer) * s.channels * s.inner;
    t.Add(Op::kAddBias, Dims({s.outer, s.channels, s.inner}), [s, n](CaseIo& io) {
      const View x = io.Random(n, 14);
      io.be().AddBias(x, io.Random(s.channels, 15), s.outer, s.channels, s.inner);
      io.Keep("x", x);
    });
    t.Add(Op::kBiasGrad, Dims({s.outer, s.channels, s.inner}), [s, n](CaseIo& io) {
      const View d_bias = io.Random(s.channels, 16);
      io.be().BiasGrad(io.Random(n, 14), d_bias, s.outer, s.channels, s.inner);
      io.Keep("d_bias", d_bias);
    });
  }
  for (size_t n : {size_t(1), size_t(37), size_t(64 * 6 * 28 * 28)}) {
    t.Add(Op::kReluForward, Dims({int(n)}), [n](CaseIo& io) {
      const View y = io.Random(n, 18);
      io.be().ReluForward(io.Random(n, 17), y);
      io.Keep("y", y);
    });
    // In place, as the model runs it, and out of place, as it runs a ReLU
    // moved off its input's backend.
    for (const bool in_place : {true, false}) {
      t.Add(Op::kReluBackward, Dims({int(n)}) + (in_place ? " in place" : ""),
            [n, in_place](CaseIo& io) {
              const View d_out = io.Random(n, 19), d_in = in_place ? d_out : io.Random(n, 20);
              io.be().ReluBackward(io.Random(n, 17), d_out, d_in);
              io.Keep("d_in", d_in);
            });
    }
    for (float rate : {0.0f, 0.3f, 1.0f}) {
      const std::string shape = Dims({int(n)}) + " rate " + std::to_string(rate).substr(0, 3);
      t.Add(Op::kDropoutForward, shape, [n, rate](CaseIo& io) {
        const View out = io.Random(n, 21), mask = io.Random(n, 22);
        io.be().DropoutForward(io.Random(n, 17), out, mask, rate, 1234567);
        io.Keep("out", out);
        io.Keep("mask", mask);
      });
      t.Add(Op::kDropoutBackward, shape,
            [n, rate](CaseIo& io) {
              const View mask = io.Random(n, 22), d_in = io.Random(n, 23);
              io.be().DropoutForward(io.Random(n, 17), io.Random(n, 21), mask, rate, 1234567);
              io.be().DropoutBackward(io.Random(n, 24), mask, rate, d_in);
              io.Keep("d_in", d_in);
            },
            {Op::kDropoutForward});
    }
  }
}

inline void AddLossAndOptimizers(Table& t) {
  const int classes = 10;
  for (int n : {1, 7, 64}) {
    std::vector<int32_t> labels(n);
    for (int i = 0; i < n; ++i) labels[i] = (i * 7 + 3) % classes;
    t.Add(Op::kSoftmaxCrossEntropy, Dims({n, classes}), [n, labels](CaseIo& io) {
      const View d_logits = io.Random(size_t(n) * classes, 25);
      io.KeepValue("loss",
                   io.be().SoftmaxCrossEntropy(io.Random(size_t(n) * classes, 26, -8.0f, 8.0f),
                                               io.Ints(labels), n, classes, d_logits));
      io.Keep("d_logits", d_logits);
    });
    t.Add(Op::kArgmaxRows, Dims({n, classes}), [n](CaseIo& io) {
      const View predicted = io.Random(n, 27);
      io.be().ArgmaxRows(io.Random(size_t(n) * classes, 26, -8.0f, 8.0f), n, classes, predicted);
      io.Keep("predicted", predicted, true);
    });
  }
  const size_t params = 61706;  // LeNet-5's
  for (float momentum : {0.0f, 0.9f}) {
    // Bit-equal, so a hub on one backend and a worker on another agree on the weights' digest.
    t.Add(Op::kSgdUpdate,
          Dims({int(params)}) + " momentum " + std::to_string(momentum).substr(0, 3),
          [params, momentum](CaseIo& io) {
            const View p = io.Random(params, 30), g = io.Random(params, 31),
                       v = io.Random(params, 32);
            for (int step = 0; step < 3; ++step)
              io.be().SgdUpdate(SgdHyper{0.05f, momentum, 5e-4f}, p, g, v);
            io.Keep("params", p);
            io.Keep("velocity", v);
          });
  }
  t.Add(Op::kAdamUpdate, Dims({int(params)}) + " 3 steps", [params](CaseIo& io) {
    const View p = io.Random(params, 33), g = io.Random(params, 34);
    const View m = io.Random(params, 35, -0.01f, 0.01f), v = io.Random(params, 36, 0.0f, 0.01f);
    for (int step = 1; step <= 3; ++step)
      io.be().AdamUpdate(AdamHyper{0.001f, 0.9f, 0.999f, 1e-8f, 1e-4f, step}, p, g, m, v);
    io.Keep("params", p);
    io.Keep("m", m);
    io.Keep("v", v);
  });
}

}  // namespace mt::kernels::test_support

#include "tests/kernels/batch_norm_clip_cases.h"
#include "tests/kernels/batch_norm_pool_cases.h"
#include "tests/kernels/half_storage_cases.h"
#include "tests/kernels/structural_op_cases.h"

namespace mt::kernels::test_support {

// Every function of the activation family, over the kinks of the piecewise
// ones (inputs in [-4, 4]), forward and backward (in place too).
inline void AddActivations(Table& t) {
  const ActivationParams params[] = {{}, {}, {0.2f, 0.5f}, {}, {0.1f, 0.0f}, {}};
  for (int f = 0; f <= static_cast<int>(Activation::kSilu); ++f) {
    const Activation fn = static_cast<Activation>(f);
    const ActivationParams p = params[f];
    for (size_t n : {size_t(1), size_t(1000), size_t(40000)}) {
      const std::string shape = std::string(ActivationName(fn)) + " " + Dims({int(n)});
      t.Add(Op::kActivationForward, shape, [fn, p, n](CaseIo& io) {
        const View y = io.Random(n, 41);
        io.be().ActivationForward(fn, p, io.Random(n, 42, -4, 4), y);
        io.Keep("y", y);
      });
      for (bool in_place : {false, true})
        t.Add(Op::kActivationBackward, shape + (in_place ? " in place" : ""),
              [fn, p, n, in_place](CaseIo& io) {
                const View d_out = io.Random(n, 43);
                const View d_in = in_place ? d_out : io.Random(n, 44);
                io.be().ActivationBackward(fn, p, io.Random(n, 42, -4, 4), d_out, d_in);
                io.Keep("d_in", d_in);
              });
    }
  }
}

// Every case, built on first use.
inline const std::vector<OpCase>& AllCases() {
  static const std::vector<OpCase> cases = [] {
    Table t;
    AddLinearAlgebra(t);
    AddConvolutions(t);
    AddPooling(t);
    AddAveragePooling(t);
    AddBatchNorm(t);
    AddBatchNormClip(t);
    AddClip(t);
    AddActivations(t);
    AddElementwise(t);
    AddLossAndOptimizers(t);
    AddStructuralOps(t);
    AddHalfStorage(t);
    return t.Take();
  }();
  return cases;
}

// Runs `c` on `be`; returns what it kept, in the order it kept them.
inline std::vector<Output> RunCase(const OpCase& c, Backend& be) {
  CaseIo io(be);
  c.run(io);
  return io.TakeOutputs();
}

}  // namespace mt::kernels::test_support
