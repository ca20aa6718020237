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

namespace mt::kernels::bench {
namespace {

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

Timing TimeOn(Backend& be, OpTimer& timer, const OpCase& c, int repeat, bool time_copies) {
  test_support::CaseIo io(be);
  timer.Arm(c.op, repeat);
  c.run(io);
  const OpTime op = timer.Disarm();
  Timing t;
  t.op_ms = op.calls ? op.ms : NAN;
  t.calls = op.calls;
  if (time_copies) {
    std::vector<float> sink;
    std::vector<double> samples;
    for (int i = 0; i < repeat; ++i) {
      const auto start = Clock::now();
      for (const auto& [view, host] : io.uploads()) be.Upload(host.data(), view);
      for (const View& view : io.kept()) {
        sink.resize(view.count);
        be.Download(view, sink.data());
      }
      be.Synchronize();
      samples.push_back(MsSince(start));
    }
    t.copy_ms = Median(samples);
  }
  t.outputs = io.TakeOutputs();
  return t;
}

std::pair<double, std::string> CompareOutputs(const Timing& other, const Timing& cpu) {
  double worst = 0.0;
  std::string where;
  for (size_t k = 0; k < cpu.outputs.size() && k < other.outputs.size(); ++k) {
    const double e =
        RelativeError(other.outputs[k].data, cpu.outputs[k].data, cpu.outputs[k].integers);
    if (e > worst || where.empty()) worst = std::max(worst, e), where = cpu.outputs[k].name;
  }
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
