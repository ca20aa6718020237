// The activation family (kernels/activation.h) on the CPU: one loop per
// function, the switch outside it, so each loop inlines its formula.
#include <type_traits>

#include "kernels/activation.h"
#include "kernels/cpu/cpu_backend.h"

namespace mt::kernels {
namespace {

template <class Fn>
void WithActivation(Activation f, Fn&& fn) {
  switch (f) {
    case Activation::kSigmoid:
      return fn(std::integral_constant<Activation, Activation::kSigmoid>{});
    case Activation::kTanh: return fn(std::integral_constant<Activation, Activation::kTanh>{});
    case Activation::kHardSigmoid:
      return fn(std::integral_constant<Activation, Activation::kHardSigmoid>{});
    case Activation::kHardSwish:
      return fn(std::integral_constant<Activation, Activation::kHardSwish>{});
    case Activation::kLeakyRelu:
      return fn(std::integral_constant<Activation, Activation::kLeakyRelu>{});
    case Activation::kSilu: return fn(std::integral_constant<Activation, Activation::kSilu>{});
  }
}

}  // namespace

void CpuBackend::ActivationForward(Activation f, const ActivationParams& p, View in, View out) {
  const float* x = Data(in);
  float* y = Data(out);
  WithActivation(f, [&](auto fixed) {
    ForEachRange(in.count, [x, y, &p](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) y[i] = Activate(decltype(fixed)::value, p, x[i]);
    });
  });
}

void CpuBackend::ActivationBackward(Activation f, const ActivationParams& p, View in, View d_out,
                                    View d_in) {
  const float* x = Data(in);
  const float* dy = Data(d_out);
  float* dx = Data(d_in);
  WithActivation(f, [&](auto fixed) {
    ForEachRange(in.count, [x, dy, dx, &p](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i)
        dx[i] = dy[i] * ActivationSlope(decltype(fixed)::value, p, x[i]);
    });
  });
}

}  // namespace mt::kernels
