// The cases of backend_ops_bench: seeded random inputs at LeNet-5's and
// mentee's batch-64 shapes, one builder per kind of op.
#include "tests/bench/backend_ops_cases.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/backend.h"
#include "kernels/cpu/cpu_backend.h"

namespace mt::kernels::bench {
namespace {

std::vector<float> RandomVector(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

std::vector<float> IntsAsFloatSlots(const std::vector<int32_t>& ints) {
  std::vector<float> slots(ints.size());
  if (!ints.empty()) std::memcpy(slots.data(), ints.data(), ints.size() * sizeof(int32_t));
  return slots;
}

Tensor Input(std::string name, std::vector<float> host) {
  Tensor t;
  t.name = std::move(name);
  t.role = Tensor::kInput;
  t.count = host.size();
  t.host = std::move(host);
  return t;
}

Tensor IntInput(std::string name, const std::vector<int32_t>& host) {
  Tensor t = Input(std::move(name), IntsAsFloatSlots(host));
  t.is_int = true;
  return t;
}

Tensor Output(std::string name, size_t count, bool is_int = false) {
  Tensor t;
  t.name = std::move(name);
  t.role = Tensor::kOutput;
  t.count = count;
  t.is_int = is_int;
  return t;
}

Tensor Scratch(std::string name) {
  Tensor t;
  t.name = std::move(name);
  t.role = Tensor::kScratch;
  return t;
}

std::string Dims(std::initializer_list<int> dims) {
  std::string s;
  for (int d : dims) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

std::string ConvShape(const ConvGeometry& g) {
  return "b" + std::to_string(g.batch) + " " + std::to_string(g.in_c) + "->" +
         std::to_string(g.out_c) + " " + Dims({g.in_h, g.in_w}) + " k" + std::to_string(g.kernel) +
         (g.pad ? " p" + std::to_string(g.pad) : "");
}

// ---- the cases

// c = a * op(b), beta 0 so repeated runs give the same c.
OpCase GemmCase(const std::string& name, bool trans_b, int m, int n, int k, uint32_t seed) {
  OpCase c;
  c.op = "gemm " + name;
  c.shape = "m" + std::to_string(m) + " n" + std::to_string(n) + " k" + std::to_string(k) +
            (trans_b ? " B^T" : "");
  c.tensors = {Input("a", RandomVector(size_t(m) * k, seed)),
               Input("b", RandomVector(size_t(k) * n, seed + 1)), Output("c", size_t(m) * n)};
  c.run = [=](Backend& be, const std::vector<View>& v) {
    be.Gemm(false, trans_b, m, n, k, 1.0f, v[0], v[1], 0.0f, v[2]);
    return 0.0;
  };
  c.launches_on = [](const Backend&) { return 1; };  // CLBlast may add pad/transpose kernels
  return c;
}

// The OpenCL conv runs over groups of samples that fit its workspace; the
// group count follows from the workspace size it asks for.
int ConvGroups(const Backend& be, const ConvGeometry& g) {
  const size_t per_sample = size_t(g.patch() + g.out_c) * g.out_h() * g.out_w();
  const size_t group = std::max<size_t>(1, be.ConvWorkspaceCount(g) / per_sample);
  return static_cast<int>((size_t(g.batch) + group - 1) / group);
}

OpCase ConvForwardCase(const std::string& name, const ConvGeometry& g, uint32_t seed) {
  OpCase c;
  c.op = "conv_fwd " + name;
  c.shape = ConvShape(g);
  c.tensors = {Input("in", RandomVector(size_t(g.batch) * g.in_size(), seed)),
               Input("weight", RandomVector(g.weight_count(), seed + 1)),
               Input("bias", RandomVector(g.out_c, seed + 2)),
               Output("out", size_t(g.batch) * g.out_size()), Scratch("workspace")};
  c.scratch = [g](const Backend& be) { return be.ConvWorkspaceCount(g); };
  c.run = [g](Backend& be, const std::vector<View>& v) {
    be.Conv2dForward(g, v[0], v[1], v[2], v[3], v[4]);
    return 0.0;
  };
  // Per group: im2col, GEMM, gather to NCHW with bias.
  c.launches_on = [g](const Backend& be) { return 3 * ConvGroups(be, g); };
  return c;
}

OpCase ConvBackwardCase(const std::string& name, const ConvGeometry& g, uint32_t seed) {
  OpCase c;
  c.op = "conv_bwd " + name;
  c.shape = ConvShape(g) + " +d_in";
  c.tensors = {Input("in", RandomVector(size_t(g.batch) * g.in_size(), seed)),
               Input("weight", RandomVector(g.weight_count(), seed + 1)),
               Input("d_out", RandomVector(size_t(g.batch) * g.out_size(), seed + 2)),
               Output("d_in", size_t(g.batch) * g.in_size()),
               Output("d_weight", g.weight_count()),
               Output("d_bias", g.out_c),
               Scratch("workspace")};
  c.scratch = [g](const Backend& be) { return be.ConvWorkspaceCount(g); };
  c.run = [g](Backend& be, const std::vector<View>& v) {
    be.Conv2dBackward(g, v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
    return 0.0;
  };
  // Per group: transpose d_out, im2col, two GEMMs, col2im; then the bias sum.
  c.launches_on = [g](const Backend& be) { return 5 * ConvGroups(be, g) + 1; };
  return c;
}

// The argmax a forward pass leaves, for the backward case's input.
std::vector<int32_t> PoolArgmax(const PoolGeometry& g, const std::vector<float>& in) {
  CpuBackend cpu(1);
  const size_t n_out = size_t(g.batch) * g.out_size();
  auto in_b = cpu.Allocate(in.size());
  auto out_b = cpu.Allocate(n_out);
  auto arg_b = cpu.Allocate(n_out);
  cpu.Upload(in.data(), WholeOf(*in_b));
  cpu.MaxPoolForward(g, WholeOf(*in_b), WholeOf(*out_b), WholeOf(*arg_b));
  std::vector<int32_t> arg(n_out);
  cpu.Download(WholeOf(*arg_b), arg.data());
  return arg;
}

std::string PoolShape(const PoolGeometry& g) {
  return "b" + std::to_string(g.batch) + " " + Dims({g.channels, g.in_h, g.in_w}) + " k" +
         std::to_string(g.size) + " s" + std::to_string(g.stride);
}

OpCase PoolForwardCase(const std::string& name, const PoolGeometry& g, uint32_t seed) {
  OpCase c;
  c.op = "maxpool_fwd " + name;
  c.shape = PoolShape(g);
  const size_t n_out = size_t(g.batch) * g.out_size();
  c.tensors = {Input("in", RandomVector(size_t(g.batch) * g.in_size(), seed)), Output("out", n_out),
               Output("argmax", n_out, /*is_int=*/true)};
  c.run = [g](Backend& be, const std::vector<View>& v) {
    be.MaxPoolForward(g, v[0], v[1], v[2]);
    return 0.0;
  };
  c.launches_on = [](const Backend&) { return 1; };
  return c;
}

OpCase PoolBackwardCase(const std::string& name, const PoolGeometry& g, uint32_t seed) {
  OpCase c;
  c.op = "maxpool_bwd " + name;
  c.shape = PoolShape(g);
  const size_t n_in = size_t(g.batch) * g.in_size(), n_out = size_t(g.batch) * g.out_size();
  c.tensors = {Input("d_out", RandomVector(n_out, seed + 1)),
               IntInput("argmax", PoolArgmax(g, RandomVector(n_in, seed))), Output("d_in", n_in)};
  c.run = [g](Backend& be, const std::vector<View>& v) {
    be.MaxPoolBackward(g, v[0], v[1], v[2]);
    return 0.0;
  };
  c.launches_on = [](const Backend&) { return 1; };
  return c;
}

OpCase ReluCase(const std::string& name, std::initializer_list<int> dims, uint32_t seed) {
  size_t n = 1;
  for (int d : dims) n *= size_t(d);
  OpCase c;
  c.op = "relu_fwd " + name;
  c.shape = Dims(dims);
  c.tensors = {Input("in", RandomVector(n, seed)), Output("out", n)};
  c.run = [](Backend& be, const std::vector<View>& v) {
    be.ReluForward(v[0], v[1]);
    return 0.0;
  };
  c.launches_on = [](const Backend&) { return 1; };
  return c;
}

OpCase SoftmaxCase(int n, int classes, uint32_t seed) {
  std::vector<int32_t> labels(n);
  for (int i = 0; i < n; ++i) labels[i] = (i * 7 + 3) % classes;
  OpCase c;
  c.op = "softmax_xent";
  c.shape = Dims({n, classes});
  c.tensors = {Input("logits", RandomVector(size_t(n) * classes, seed, -8.0f, 8.0f)),
               IntInput("labels", labels), Output("d_logits", size_t(n) * classes)};
  c.run = [n, classes](Backend& be, const std::vector<View>& v) {
    return be.SoftmaxCrossEntropy(v[0], v[1], n, classes, v[2]);
  };
  // The kernel, then the blocking read of the per-row losses.
  c.launches_on = [](const Backend&) { return 2; };
  return c;
}

}  // namespace

std::vector<OpCase> AllCases() {
  // LeNet-5: 1x28x28 -> conv1 6 k5 p2 -> pool 2 -> conv2 16 k5 -> pool 2 -> fc 400-120-84-10.
  const ConvGeometry lenet_conv1{kBatch, 1, 28, 28, 6, 5, 1, 2};
  const ConvGeometry lenet_conv2{kBatch, 6, 14, 14, 16, 5, 1, 0};
  // mentee: 3x32x32 -> conv1 32, conv2 32, pool, conv3 64, conv4 64, pool,
  // conv5 128, pool -> fc 2048-256-128-10; every conv 3x3 pad 1.
  const ConvGeometry mentee_conv1{kBatch, 3, 32, 32, 32, 3, 1, 1};
  const ConvGeometry mentee_conv2{kBatch, 32, 32, 32, 32, 3, 1, 1};
  const ConvGeometry mentee_conv3{kBatch, 32, 16, 16, 64, 3, 1, 1};
  const ConvGeometry mentee_conv5{kBatch, 64, 8, 8, 128, 3, 1, 1};
  const PoolGeometry lenet_pool1{kBatch, 6, 28, 28, 2, 2};
  const PoolGeometry mentee_pool2{kBatch, 32, 32, 32, 2, 2};  // mentee's first pool

  // A conv's forward GEMM for one sample: weight [out_c x patch] * col [patch x out_hw].
  const auto conv_gemm = [](const std::string& name, const ConvGeometry& g, uint32_t seed) {
    OpCase c = GemmCase(name, false, g.out_c, g.out_h() * g.out_w(), g.patch(), seed);
    c.shape += " (1 sample)";
    return c;
  };

  std::vector<OpCase> cases;
  // Dense forward: in [64 x inputs] * W^T, W [units x inputs], as core/layers/dense.cc.
  cases.push_back(GemmCase("lenet fc1", true, kBatch, 120, 400, 100));
  cases.push_back(GemmCase("lenet fc2", true, kBatch, 84, 120, 110));
  cases.push_back(GemmCase("lenet fc3", true, kBatch, 10, 84, 120));
  cases.push_back(conv_gemm("lenet conv1", lenet_conv1, 130));
  cases.push_back(conv_gemm("lenet conv2", lenet_conv2, 140));
  cases.push_back(conv_gemm("mentee conv1", mentee_conv1, 150));
  cases.push_back(conv_gemm("mentee conv2", mentee_conv2, 160));
  cases.push_back(conv_gemm("mentee conv3", mentee_conv3, 170));
  cases.push_back(conv_gemm("mentee conv5", mentee_conv5, 180));
  cases.push_back(GemmCase("mentee fc1", true, kBatch, 256, 2048, 190));

  cases.push_back(ConvForwardCase("lenet conv1", lenet_conv1, 200));
  cases.push_back(ConvBackwardCase("lenet conv1", lenet_conv1, 210));
  cases.push_back(ConvForwardCase("lenet conv2", lenet_conv2, 220));
  cases.push_back(ConvBackwardCase("lenet conv2", lenet_conv2, 230));
  cases.push_back(ConvForwardCase("mentee conv1", mentee_conv1, 240));
  cases.push_back(ConvBackwardCase("mentee conv1", mentee_conv1, 250));
  cases.push_back(ConvForwardCase("mentee conv3", mentee_conv3, 260));
  cases.push_back(ConvBackwardCase("mentee conv3", mentee_conv3, 270));

  cases.push_back(PoolForwardCase("lenet pool1", lenet_pool1, 300));
  cases.push_back(PoolBackwardCase("lenet pool1", lenet_pool1, 310));
  cases.push_back(PoolForwardCase("mentee pool2", mentee_pool2, 320));
  cases.push_back(PoolBackwardCase("mentee pool2", mentee_pool2, 330));

  cases.push_back(ReluCase("lenet conv1", {kBatch, 6, 28, 28}, 400));
  cases.push_back(ReluCase("mentee conv1", {kBatch, 32, 32, 32}, 410));
  cases.push_back(SoftmaxCase(kBatch, 10, 500));
  return cases;
}

}  // namespace mt::kernels::bench
