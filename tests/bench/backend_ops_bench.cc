// Per-op timings of the CPU backend against the OpenCL backend, at the shapes
// LeNet-5 and mentee (core/model/presets.cc) run at batch 64. For every op:
//   cpu            median op time on CpuBackend(--threads)
//   opencl_kernel  median of (call + Synchronize) with the data on the device
//   opencl_copy    median of uploading the op's inputs and downloading its
//                  outputs: the cost if the data lived on the host
//   opencl_launch  the op's approximate enqueue count x the fixed cost of one
//                  tiny enqueue + Synchronize (Fill of one float)
//   ratio          opencl_kernel / cpu (above 1: OpenCL slower)
// Both backends get the same inputs, and their outputs are compared once; a
// max relative error above 1e-3 flags the row, since a fast wrong op proves
// nothing. Per-op placement is a measurement (docs/architecture.md, Placement),
// and this is it.
//
//   backend_ops_bench [--threads N] [--repeat N] [--json FILE]
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/backend.h"
#include "kernels/cpu/cpu_backend.h"

#if MT_HAVE_OPENCL
#include "kernels/opencl/opencl_backend.h"
#include "kernels/opencl/opencl_device.h"
#endif

namespace mt::kernels {
namespace {

constexpr int kBatch = 64;
constexpr int kWarmup = 3;
constexpr double kMaxRelativeError = 1e-3;

// ---- one op, described independently of the backend

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

// ---- running a case on one backend

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double Median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// A case's tensors allocated on one backend, inputs uploaded.
struct Bound {
  std::vector<std::unique_ptr<Buffer>> buffers;
  std::vector<View> views;
};

Bound Bind(Backend& be, const OpCase& c) {
  Bound b;
  for (const Tensor& t : c.tensors) {
    const size_t count = t.role == Tensor::kScratch ? c.scratch(be) : t.count;
    b.buffers.push_back(be.Allocate(count));
    b.views.push_back(WholeOf(*b.buffers.back()));
    if (t.role == Tensor::kInput && count) be.Upload(t.host.data(), b.views.back());
  }
  be.Synchronize();
  return b;
}

struct Timing {
  double op_ms = NAN;    // median of call + Synchronize
  double copy_ms = NAN;  // median of uploading the inputs and downloading the outputs
  std::vector<std::vector<float>> outputs;  // after the op, in tensor order
  double scalar = 0.0;                      // the op's return value
};

Timing TimeOn(Backend& be, const OpCase& c, int repeat, bool time_copies) {
  Bound b = Bind(be, c);
  Timing t;
  for (int i = 0; i < kWarmup; ++i) t.scalar = c.run(be, b.views);
  be.Synchronize();
  std::vector<double> samples;
  for (int i = 0; i < repeat; ++i) {
    const auto start = Clock::now();
    c.run(be, b.views);
    be.Synchronize();
    samples.push_back(MsSince(start));
  }
  t.op_ms = Median(samples);

  // The op's results (every case is idempotent: it overwrites its outputs).
  for (size_t i = 0; i < c.tensors.size(); ++i) {
    if (c.tensors[i].role != Tensor::kOutput) continue;
    t.outputs.emplace_back(c.tensors[i].count);
    if (c.tensors[i].count) be.Download(b.views[i], t.outputs.back().data());
  }

  if (time_copies) {
    std::vector<float> sink;
    samples.clear();
    for (int i = 0; i < repeat; ++i) {
      const auto start = Clock::now();
      for (size_t j = 0; j < c.tensors.size(); ++j) {
        const Tensor& tensor = c.tensors[j];
        if (tensor.role == Tensor::kInput && tensor.count)
          be.Upload(tensor.host.data(), b.views[j]);
        if (tensor.role == Tensor::kOutput && tensor.count) {
          sink.resize(tensor.count);
          be.Download(b.views[j], sink.data());
        }
      }
      be.Synchronize();
      samples.push_back(MsSince(start));
    }
    t.copy_ms = Median(samples);
  }
  return t;
}

// max |got - want| / max |want| over a tensor, as the backend tests measure
// (int tensors: 0 if identical, else 1).
double RelativeError(const std::vector<float>& got, const std::vector<float>& want, bool is_int) {
  if (got.size() != want.size()) return HUGE_VAL;
  if (is_int)
    return std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0 ? 0.0 : 1.0;
  double scale = 0.0, err = 0.0;
  for (size_t i = 0; i < want.size(); ++i) {
    scale = std::max(scale, std::fabs(double{want[i]}));
    const double d = std::fabs(double{got[i]} - double{want[i]});
    if (!std::isfinite(d)) return HUGE_VAL;
    err = std::max(err, d);
  }
  return err / std::max(scale, 1e-30);
}

// The worst error over the case's outputs (and its scalar result), and which one.
std::pair<double, std::string> CompareOutputs(const OpCase& c, const Timing& cl,
                                              const Timing& cpu) {
  double worst = 0.0;
  std::string where;
  size_t k = 0;
  for (const Tensor& t : c.tensors) {
    if (t.role != Tensor::kOutput) continue;
    const double e = RelativeError(cl.outputs[k], cpu.outputs[k], t.is_int);
    if (e > worst || where.empty()) worst = std::max(worst, e), where = t.name;
    ++k;
  }
  const double scalar_err =
      std::fabs(cl.scalar - cpu.scalar) / std::max(std::fabs(cpu.scalar), 1e-30);
  if (cpu.scalar != 0.0 && scalar_err > worst) worst = scalar_err, where = "loss";
  return {worst, where};
}

// ---- flags and output

struct Flags {
  int threads = 1;
  int repeat = 20;
  std::string json;
};

const char kUsage[] =
    "usage: backend_ops_bench [--threads N] [--repeat N] [--json FILE]\n"
    "  Times each backend op at LeNet-5's and mentee's batch-64 shapes on the CPU\n"
    "  backend and the OpenCL backend (when the build and the machine have one).\n"
    "  --threads N  CPU backend threads (default 1)\n"
    "  --repeat N   timed iterations per op, after 3 warm-up runs (default 20)\n"
    "  --json FILE  also write the results as JSON to FILE\n"
    "  --help       this text\n";

[[noreturn]] void BadFlag(const std::string& why) {
  std::fprintf(stderr, "backend_ops_bench: %s (try --help)\n", why.c_str());
  std::exit(2);
}

int PositiveInt(const std::string& flag, const std::string& text, long max) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || v < 1 || v > max)
    BadFlag(flag + " wants a whole number from 1 to " + std::to_string(max) + ", got '" + text +
            "'");
  return static_cast<int>(v);
}

Flags ParseFlags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    bool has_value = false;
    if (const size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1), arg = arg.substr(0, eq), has_value = true;
    }
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (arg != "--threads" && arg != "--repeat" && arg != "--json")
      BadFlag("unknown argument '" + arg + "'");
    if (!has_value) {
      if (i + 1 >= argc) BadFlag(arg + " needs a value");
      value = argv[++i];
    }
    if (arg == "--threads") f.threads = PositiveInt(arg, value, 1024);
    if (arg == "--repeat") f.repeat = PositiveInt(arg, value, 1000000);
    if (arg == "--json") {
      if (value.empty()) BadFlag("--json needs a file name");
      f.json = value;
    }
  }
  return f;
}

struct Row {
  std::string op, shape;
  double cpu_ms = NAN;
  bool has_cl = false;
  double cl_kernel_ms = NAN, cl_copy_ms = NAN, cl_launch_ms = NAN;
  int launches = 0;
  double error = 0.0;
  std::string error_in;
};

std::string Fmt(double v, const char* format = "%.3f") {
  if (std::isnan(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    const unsigned char u = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\', out += ch;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string JsonNumber(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

bool WriteJson(const std::string& path, const std::string& device, int threads, double launch_ms,
               const std::vector<Row>& rows) {
  std::string j = "{\n  \"opencl_device\": " + (device.empty() ? "null" : JsonString(device)) +
                  ",\n  \"threads\": " + std::to_string(threads) +
                  ",\n  \"launch_ms\": " + JsonNumber(launch_ms) + ",\n  \"ops\": [";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    j += std::string(i ? "," : "") + "\n    {\"op\": " + JsonString(r.op) +
         ", \"shape\": " + JsonString(r.shape) + ", \"cpu_ms\": " + JsonNumber(r.cpu_ms) +
         ", \"opencl_kernel_ms\": " + JsonNumber(r.cl_kernel_ms) +
         ", \"opencl_copy_ms\": " + JsonNumber(r.cl_copy_ms) +
         ", \"ratio\": " + JsonNumber(r.cl_kernel_ms / r.cpu_ms) +
         ", \"launches\": " + (r.has_cl ? std::to_string(r.launches) : "null") +
         ", \"opencl_launch_ms\": " + JsonNumber(r.cl_launch_ms) +
         ", \"max_rel_error\": " + (r.has_cl ? JsonNumber(r.error) : "null") + "}";
  }
  j += "\n  ]\n}\n";
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  const bool ok = std::fwrite(j.data(), 1, j.size(), f) == j.size();
  return std::fclose(f) == 0 && ok;
}

void PrintTable(const std::vector<Row>& rows, bool with_cl) {
  std::vector<std::vector<std::string>> cells;
  if (with_cl)
    cells.push_back(
        {"op", "shape", "cpu_ms", "ocl_kernel_ms", "ocl_copy_ms", "ocl_launch_ms", "ratio", ""});
  else
    cells.push_back({"op", "shape", "cpu_ms"});
  for (const Row& r : rows) {
    if (!with_cl) {
      cells.push_back({r.op, r.shape, Fmt(r.cpu_ms)});
      continue;
    }
    std::string note;
    if (r.error > kMaxRelativeError)
      note = "WARNING: " + r.error_in + " differs from cpu, max rel error " + Fmt(r.error, "%.2g");
    cells.push_back({r.op, r.shape, Fmt(r.cpu_ms), Fmt(r.cl_kernel_ms), Fmt(r.cl_copy_ms),
                     std::to_string(r.launches) + "x = " + Fmt(r.cl_launch_ms),
                     Fmt(r.cl_kernel_ms / r.cpu_ms, "%.2f"), note});
  }
  std::vector<size_t> width(cells[0].size(), 0);
  for (const auto& line : cells)
    for (size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], line[i].size());
  for (const auto& line : cells) {
    std::string out;
    for (size_t i = 0; i < line.size(); ++i) {
      const bool left = i < 2 || i == 7;  // names and the note; numbers right-aligned
      const std::string pad(width[i] - line[i].size(), ' ');
      out += (i ? "  " : "") + (left ? line[i] + pad : pad + line[i]);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    std::puts(out.c_str());
  }
}

#if MT_HAVE_OPENCL
// The fixed cost of one enqueue and the wait for it: Fill of one float, then Synchronize.
double LaunchMs(OpenClBackend& cl) {
  auto one = cl.Allocate(1);
  for (int i = 0; i < 20; ++i) {
    cl.Fill(WholeOf(*one), 1.0f);
    cl.Synchronize();
  }
  std::vector<double> samples;
  for (int i = 0; i < 200; ++i) {
    const auto start = Clock::now();
    cl.Fill(WholeOf(*one), 1.0f);
    cl.Synchronize();
    samples.push_back(MsSince(start));
  }
  return Median(samples);
}
#endif

int Main(int argc, char** argv) {
  const Flags flags = ParseFlags(argc, argv);
  CpuBackend cpu(flags.threads);

  std::unique_ptr<Backend> cl;
  std::string device, no_cl_reason;
  double launch_ms = NAN;
#if MT_HAVE_OPENCL
  if (ListOpenClDevices().empty()) {
    no_cl_reason = "no OpenCL platform: OpenCL column skipped";
  } else {
    const OpenClDevice dev = DefaultOpenClDevice();
    device = dev.Describe();
    auto backend = std::make_unique<OpenClBackend>(dev);
    launch_ms = LaunchMs(*backend);
    cl = std::move(backend);
  }
#else
  no_cl_reason = "no OpenCL platform: OpenCL column skipped (this build has no OpenCL backend)";
#endif

  std::printf("backend_ops_bench: batch %d, cpu threads %d, repeat %d (median, after %d warm-up)\n",
              kBatch, flags.threads, flags.repeat, kWarmup);
  if (cl) {
    std::printf("opencl device: %s; launch (Fill 1 float + Synchronize) %.4f ms\n", device.c_str(),
                launch_ms);
    std::puts(
        "ratio = ocl_kernel_ms / cpu_ms (above 1: OpenCL slower); ocl_launch_ms = approx. enqueues "
        "x launch");
  }
  std::fflush(stdout);

  const auto start = Clock::now();
  std::vector<Row> rows;
  for (const OpCase& c : AllCases()) {
    Row r;
    r.op = c.op;
    r.shape = c.shape;
    const Timing on_cpu = TimeOn(cpu, c, flags.repeat, /*time_copies=*/false);
    r.cpu_ms = on_cpu.op_ms;
    if (cl) {
      const Timing on_cl = TimeOn(*cl, c, flags.repeat, /*time_copies=*/true);
      r.has_cl = true;
      r.cl_kernel_ms = on_cl.op_ms;
      r.cl_copy_ms = on_cl.copy_ms;
      r.launches = c.launches_on(*cl);
      r.cl_launch_ms = r.launches * launch_ms;
      std::tie(r.error, r.error_in) = CompareOutputs(c, on_cl, on_cpu);
    }
    rows.push_back(r);
  }
  PrintTable(rows, cl != nullptr);
  if (!cl) std::puts(no_cl_reason.c_str());
  std::printf("total %.1f s\n", MsSince(start) / 1000.0);

  if (!flags.json.empty() && !WriteJson(flags.json, device, flags.threads, launch_ms, rows)) {
    std::fprintf(stderr, "backend_ops_bench: cannot write %s\n", flags.json.c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace mt::kernels

int main(int argc, char** argv) {
  try {
    return mt::kernels::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "backend_ops_bench: %s\n", e.what());
    return 1;
  }
}
