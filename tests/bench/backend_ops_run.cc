#include "tests/bench/backend_ops_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/backend.h"
#include "tests/bench/backend_ops_cases.h"

namespace mt::kernels::bench {
namespace {

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

}  // namespace

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double Median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

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

double LaunchMs(Backend& be) {
  auto one = be.Allocate(1);
  for (int i = 0; i < 20; ++i) {
    be.Fill(WholeOf(*one), 1.0f);
    be.Synchronize();
  }
  std::vector<double> samples;
  for (int i = 0; i < 200; ++i) {
    const auto start = Clock::now();
    be.Fill(WholeOf(*one), 1.0f);
    be.Synchronize();
    samples.push_back(MsSince(start));
  }
  return Median(samples);
}

}  // namespace mt::kernels::bench
