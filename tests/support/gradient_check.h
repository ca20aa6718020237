// Numerical gradient checks by central differences, after Caffe's
// GradientChecker: for a layer, the scalar objective is sum(out * r) for a
// fixed random r, so the analytic input and parameter gradients come from one
// Backward with d_out = r. Points where the objective has a kink (a ReLU
// input or a max-pool choice crossing over inside the perturbation) are
// detected by comparing one-sided differences and skipped.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <vector>

#include "core/layers/layer.h"
#include "core/util/rng.h"
#include "kernels/backend.h"

namespace mt::test_support {

struct CheckOptions {
  float eps = 1e-2f;
  double rel_tol = 1e-2;
  double abs_tol = 1e-3;
  double max_skipped_fraction = 0.1;
  // One-sided differences further apart than this mark a kink; float noise
  // in the objective sets the floor.
  double kink_abs = 1e-3;
  double kink_rel = 1e-2;
  bool check_input = true;
  // Whole-network checks: a point can sit between two kinks whose one-sided
  // slopes agree, which no local test tells from a wrong gradient; allow a
  // few such points, while a real error shows up at most of them.
  double max_mismatch_fraction = 0.0;
  // Binds running statistics (batch norm's) at their initial values; off
  // where the test has bound its own to watch them.
  bool bind_running_stats = false;
  // The pass the objective runs (false: evaluation mode).
  bool training = true;
  // Parameters start uniform in [-param_range, param_range].
  float param_range = 0.5f;
  // Off for a layer that leaves its parameter gradients alone (frozen).
  bool check_params = true;
  // Shown the output of the unperturbed forward pass, to assert what the
  // check covers (e.g. that a clip's boundaries are hit).
  std::function<void(const std::vector<float>&)> inspect_output;
};

inline std::vector<float> RandomVector(size_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (auto& x : v) x = rng.Uniform(lo, hi);
  return v;
}

// Compares analytic and numeric derivatives of `objective` with respect to
// the values in `x` (perturbed in place through `set`). Returns nothing;
// records gtest failures naming `what` and the index.
inline void CompareDerivatives(const std::string& what, std::vector<float>& x,
                               const std::vector<float>& analytic,
                               const std::function<void(const std::vector<float>&)>& set,
                               const std::function<double()>& objective, const CheckOptions& o,
                               size_t max_checks = 400) {
  ASSERT_EQ(x.size(), analytic.size());
  const size_t stride = std::max<size_t>(1, x.size() / max_checks);
  size_t checked = 0, skipped = 0, mismatched = 0;
  std::string first_mismatches;
  set(x);
  const double f0 = objective();
  for (size_t i = 0; i < x.size(); i += stride) {
    const float orig = x[i];
    x[i] = orig + o.eps;
    set(x);
    const double fp = objective();
    x[i] = orig - o.eps;
    set(x);
    const double fm = objective();
    x[i] = orig;
    const double fwd = (fp - f0) / o.eps, bwd = (f0 - fm) / o.eps;
    const double numeric = (fp - fm) / (2.0 * o.eps);
    ++checked;
    if (std::fabs(fwd - bwd) > o.kink_abs + o.kink_rel * std::max(std::fabs(fwd), std::fabs(bwd))) {
      ++skipped;  // a kink inside [x - eps, x + eps]
      continue;
    }
    const double a = analytic[i];
    if (std::fabs(a - numeric) >
        o.abs_tol + o.rel_tol * std::max(std::fabs(a), std::fabs(numeric))) {
      if (++mismatched <= 5)
        first_mismatches += "\n  " + what + "[" + std::to_string(i) + "]: analytic " +
                            std::to_string(a) + " numeric " + std::to_string(numeric);
    }
  }
  set(x);
  EXPECT_GT(checked, 0u) << what;
  EXPECT_LE(mismatched, o.max_mismatch_fraction * (checked - skipped))
      << what << ": " << mismatched << " of " << checked - skipped << " derivatives differ"
      << first_mismatches;
  EXPECT_LE(skipped, o.max_skipped_fraction * checked + 1) << what << ": too many kinks skipped";
}

// Checks one layer's input and parameter gradients on `backend`, for a
// layer of one input or several (Add): `input_values` holds the inputs one
// after the other.
inline void CheckLayerGradientsOnInputs(Layer& layer, const std::vector<Shape>& in_samples,
                                        int batch, kernels::Backend& backend,
                                        const std::vector<float>& input_values,
                                        const CheckOptions& o = {}) {
  layer.set_backend(&backend);
  const Shape out_sample = layer.SetupInputs(in_samples);
  const size_t out_n = out_sample.count() * batch;
  const size_t p_n = layer.ParamCount();
  auto params = backend.Allocate(std::max<size_t>(p_n, 1));
  auto grads = backend.Allocate(std::max<size_t>(p_n, 1));
  layer.BindParams(kernels::WholeOf(*params).Slice(0, p_n), kernels::WholeOf(*grads).Slice(0, p_n));
  std::unique_ptr<kernels::Buffer> stats;
  if (const size_t s_n = o.bind_running_stats ? layer.RunningStatCount() : 0) {
    stats = backend.Allocate(s_n);
    std::vector<float> host(s_n);
    layer.InitRunningStats(host.data());
    backend.Upload(host.data(), kernels::WholeOf(*stats));
    layer.BindRunningStats(kernels::WholeOf(*stats));
  }
  layer.Reshape(batch);
  std::unique_ptr<kernels::Buffer> workspace;  // as the model gives its layers one
  if (const size_t w_n = layer.WorkspaceFloats(batch)) {
    workspace = backend.Allocate(w_n);
    layer.BindWorkspace(kernels::WholeOf(*workspace));
  }
  std::vector<float> p_host = RandomVector(p_n, 7, -o.param_range, o.param_range);
  if (p_n) backend.Upload(p_host.data(), kernels::WholeOf(*params).Slice(0, p_n));

  // In-place layers read and write one buffer, so keep input and output apart
  // only when the layer allows it.
  const bool in_place = layer.InPlace() && in_samples.size() == 1;
  std::vector<std::unique_ptr<kernels::Buffer>> buffers;
  auto allocate = [&](size_t n) {
    buffers.push_back(backend.Allocate(n));
    return kernels::WholeOf(*buffers.back());
  };
  std::vector<Tensor> in, d_in;
  std::vector<size_t> in_offsets;
  size_t in_n = 0;
  for (const Shape& sample : in_samples) {
    in_offsets.push_back(in_n);
    const size_t n = sample.count() * batch;
    in_n += n;
    in.push_back(Tensor{sample.WithBatch(batch), allocate(n)});
  }
  const Tensor out{out_sample.WithBatch(batch), in_place ? in[0].view : allocate(out_n)};
  const Tensor d_out{out.shape, allocate(out_n)};
  for (const Tensor& t : in)
    d_in.push_back(Tensor{t.shape, in_place ? d_out.view : allocate(t.shape.count())});
  const std::vector<float> r = RandomVector(out_n, 11);
  ForwardContext ctx{o.training, 1234};

  std::vector<float> x = input_values;
  ASSERT_EQ(x.size(), in_n);
  std::vector<float> out_host(out_n);
  auto objective = [&]() {
    for (size_t k = 0; k < in.size(); ++k) backend.Upload(x.data() + in_offsets[k], in[k].view);
    layer.ForwardInputs(in, out, ctx);
    backend.Download(out.view, out_host.data());
    double s = 0;
    for (size_t i = 0; i < out_n; ++i) s += static_cast<double>(out_host[i]) * r[i];
    return s;
  };

  // Analytic gradients.
  objective();
  if (o.inspect_output) o.inspect_output(out_host);
  backend.Upload(r.data(), d_out.view);
  std::vector<Tensor> d_in_used = d_in;
  if (!o.check_input)
    for (Tensor& t : d_in_used) t.view = kernels::View{};
  layer.BackwardInputs(in, out, d_out, d_in_used);
  std::vector<float> d_in_host(in_n), d_p_host(p_n);
  if (o.check_input)
    for (size_t k = 0; k < in.size(); ++k)
      backend.Download(d_in[k].view, d_in_host.data() + in_offsets[k]);
  if (p_n) backend.Download(kernels::WholeOf(*grads).Slice(0, p_n), d_p_host.data());

  if (o.check_input) {
    std::vector<float> x_copy = x;
    CompareDerivatives(
        std::string(layer.Type()) + " d_input", x_copy, d_in_host,
        [&](const std::vector<float>& v) { x = v; }, objective, o);
    x = input_values;
  }
  if (p_n && o.check_params) {
    CompareDerivatives(
        std::string(layer.Type()) + " d_param", p_host, d_p_host,
        [&](const std::vector<float>& v) {
          backend.Upload(v.data(), kernels::WholeOf(*params).Slice(0, p_n));
        },
        objective, o);
  }
}

inline void CheckLayerGradients(Layer& layer, const Shape& in_sample, int batch,
                                kernels::Backend& backend, const std::vector<float>& input_values,
                                const CheckOptions& o = {}) {
  CheckLayerGradientsOnInputs(layer, {in_sample}, batch, backend, input_values, o);
}

}  // namespace mt::test_support
