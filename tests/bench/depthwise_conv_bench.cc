// Depthwise convolution on the CPU: the depthwise kernels against a plain
// loop nest per direction (forward; input gradient alone, as for a frozen
// layer; weight and bias gradients alone, as for a first layer), then the
// whole backward pass against the grouped im2col + GEMM path (what depthwise
// layers would run otherwise), on the depthwise layers of mobilenet-tiny and
// of the MobileNetV2-style ONNX fixture at batch 64. Prints milliseconds per
// call and the ratios: the fastest of reps, the figure least disturbed by
// other processes on a shared machine (the plain loops run on one thread).
//
//   depthwise_conv_bench [threads (default: all cores)] [reps (default 30)]
//                        [only the layers whose name contains this]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kernels/cpu/depthwise_conv.h"
#include "kernels/cpu/grouped_conv.h"
#include "kernels/cpu/thread_pool.h"

namespace mt::kernels {
namespace {

std::vector<float> Random(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

double FastestMs(int reps, const std::function<void()>& f) {
  f();  // warm-up: caches, pool threads, page faults
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  return *std::min_element(t.begin(), t.end());
}

// The loop nest a straightforward implementation would run, on one thread.
void NaiveForward(const ConvGeometry& g, const float* in, const float* w, const float* b,
                  float* out) {
  const int oh = g.out_h(), ow = g.out_w(), k = g.kernel, m = g.out_c / g.in_c;
  for (int n = 0; n < g.batch; ++n) {
    for (int o = 0; o < g.out_c; ++o) {
      const float* plane = in + (size_t(n) * g.in_c + o / m) * g.in_h * g.in_w;
      for (int oy = 0; oy < oh; ++oy) {
        for (int ox = 0; ox < ow; ++ox) {
          float s = b[o];
          for (int ky = 0; ky < k; ++ky) {
            const int y = oy * g.stride - g.pad + ky;
            if (y < 0 || y >= g.in_h) continue;
            for (int kx = 0; kx < k; ++kx) {
              const int x = ox * g.stride - g.pad + kx;
              if (x < 0 || x >= g.in_w) continue;
              s += plane[y * g.in_w + x] * w[o * k * k + ky * k + kx];
            }
          }
          out[((size_t(n) * g.out_c + o) * oh + oy) * ow + ox] = s;
        }
      }
    }
  }
}

// The plain loops of the two gradients, each alone; d_bias with d_weight.
void NaiveInputGrad(const ConvGeometry& g, const float* w, const float* dy, float* dx) {
  const int oh = g.out_h(), ow = g.out_w(), k = g.kernel, m = g.out_c / g.in_c;
  std::fill(dx, dx + size_t(g.batch) * g.in_size(), 0.0f);
  for (int n = 0; n < g.batch; ++n) {
    for (int o = 0; o < g.out_c; ++o) {
      float* plane = dx + (size_t(n) * g.in_c + o / m) * g.in_h * g.in_w;
      for (int oy = 0; oy < oh; ++oy) {
        for (int ox = 0; ox < ow; ++ox) {
          const float d = dy[((size_t(n) * g.out_c + o) * oh + oy) * ow + ox];
          for (int ky = 0; ky < k; ++ky) {
            const int y = oy * g.stride - g.pad + ky;
            if (y < 0 || y >= g.in_h) continue;
            for (int kx = 0; kx < k; ++kx) {
              const int x = ox * g.stride - g.pad + kx;
              if (x < 0 || x >= g.in_w) continue;
              plane[y * g.in_w + x] += d * w[o * k * k + ky * k + kx];
            }
          }
        }
      }
    }
  }
}

void NaiveWeightGrad(const ConvGeometry& g, const float* in, const float* dy, float* dw,
                     float* db) {
  const int oh = g.out_h(), ow = g.out_w(), k = g.kernel, m = g.out_c / g.in_c;
  std::fill(dw, dw + g.weight_count(), 0.0f);
  std::fill(db, db + g.out_c, 0.0f);
  for (int n = 0; n < g.batch; ++n) {
    for (int o = 0; o < g.out_c; ++o) {
      const float* plane = in + (size_t(n) * g.in_c + o / m) * g.in_h * g.in_w;
      for (int oy = 0; oy < oh; ++oy) {
        for (int ox = 0; ox < ow; ++ox) {
          const float d = dy[((size_t(n) * g.out_c + o) * oh + oy) * ow + ox];
          db[o] += d;
          for (int ky = 0; ky < k; ++ky) {
            const int y = oy * g.stride - g.pad + ky;
            if (y < 0 || y >= g.in_h) continue;
            for (int kx = 0; kx < k; ++kx) {
              const int x = ox * g.stride - g.pad + kx;
              if (x < 0 || x >= g.in_w) continue;
              dw[o * k * k + ky * k + kx] += d * plane[y * g.in_w + x];
            }
          }
        }
      }
    }
  }
}

struct Layer {
  const char* name;
  int batch, c, hw, m, k, stride;
};

void Run(const Layer& l, ThreadPool& pool, int reps) {
  ConvGeometry g;
  g.batch = l.batch;
  g.in_c = l.c;
  g.in_h = g.in_w = l.hw;
  g.out_c = l.c * l.m;
  g.groups = l.c;
  g.kernel = l.k;
  g.stride = l.stride;
  g.pad = l.k / 2;
  const auto in = Random(size_t(g.batch) * g.in_size(), 1);
  const auto w = Random(g.weight_count(), 2);
  const auto b = Random(g.out_c, 3);
  const auto dy = Random(size_t(g.batch) * g.out_size(), 4);
  std::vector<float> out(dy.size()), dx(in.size()), dw(w.size()), db(b.size());
  std::vector<float> ws_dw(DepthwiseConvWorkspaceFloats(g, pool.size()));
  std::vector<float> ws_gr(GroupedConvWorkspaceFloats(g, pool.size()));

  const double fwd = FastestMs(reps, [&] {
    DepthwiseConvForward(pool, g, in.data(), w.data(), b.data(), out.data(), ws_dw.data());
  });
  const double d_in = FastestMs(reps, [&] {
    DepthwiseConvBackward(pool, g, in.data(), w.data(), dy.data(), dx.data(), nullptr, nullptr,
                          ws_dw.data());
  });
  const double d_w = FastestMs(reps, [&] {
    DepthwiseConvBackward(pool, g, in.data(), w.data(), dy.data(), nullptr, dw.data(), db.data(),
                          ws_dw.data());
  });
  const double bwd = FastestMs(reps, [&] {
    DepthwiseConvBackward(pool, g, in.data(), w.data(), dy.data(), dx.data(), dw.data(), db.data(),
                          ws_dw.data());
  });
  const int slow_reps = std::max(3, reps / 5);
  const double gr_b = FastestMs(slow_reps, [&] {
    GroupedConvBackward(pool, g, in.data(), w.data(), dy.data(), dx.data(), dw.data(), db.data(),
                        ws_gr.data());
  });
  const double nv_f =
      FastestMs(slow_reps, [&] { NaiveForward(g, in.data(), w.data(), b.data(), out.data()); });
  const double nv_in =
      FastestMs(slow_reps, [&] { NaiveInputGrad(g, w.data(), dy.data(), dx.data()); });
  const double nv_w =
      FastestMs(slow_reps, [&] { NaiveWeightGrad(g, in.data(), dy.data(), dw.data(), db.data()); });
  std::printf(
      "%-24s fwd %6.3f (plain %6.3f x%5.1f) | d_in %6.3f (plain %6.3f x%5.1f) | d_w %6.3f "
      "(plain %6.3f x%5.1f) | bwd %6.3f (grouped %6.3f x%5.1f)\n",
      l.name, fwd, nv_f, nv_f / fwd, d_in, nv_in, nv_in / d_in, d_w, nv_w, nv_w / d_w, bwd, gr_b,
      gr_b / bwd);
}

}  // namespace
}  // namespace mt::kernels

int main(int argc, char** argv) {
  const int threads =
      argc > 1 ? std::atoi(argv[1]) : static_cast<int>(std::thread::hardware_concurrency());
  const int reps = argc > 2 ? std::atoi(argv[2]) : 30;
  mt::kernels::ThreadPool pool(threads);
  const std::string only = argc > 3 ? argv[3] : "";
  std::printf("depthwise conv, %d thread(s), fastest of %d\n", pool.size(), reps);
  // mobilenet-tiny's depthwise layers (core/model/presets.cc), those of the
  // MobileNetV2-style ONNX fixture (tests/onnx/fixtures), then a 5x5 kernel
  // and a channel multiplier of 2.
  const mt::kernels::Layer layers[] = {
      {"tiny 64x16x32x32 s1", 64, 16, 32, 1, 3, 1},
      {"tiny 64x96x32x32 s2", 64, 96, 32, 1, 3, 2},
      {"tiny 64x144x16x16 s1", 64, 144, 16, 1, 3, 1},
      {"tiny 64x144x16x16 s2", 64, 144, 16, 1, 3, 2},
      {"tiny 64x192x8x8 s1", 64, 192, 8, 1, 3, 1},
      {"v2 64x32x32x32 s2", 64, 32, 32, 1, 3, 2},
      {"v2 64x64x16x16 s1", 64, 64, 16, 1, 3, 1},
      {"v2 64x64x16x16 s2", 64, 64, 16, 1, 3, 2},
      {"v2 64x96x8x8 s1", 64, 96, 8, 1, 3, 1},
      {"v2 64x96x8x8 s2", 64, 96, 8, 1, 3, 2},
      {"v2 64x128x4x4 s1", 64, 128, 4, 1, 3, 1},
      {"64x96x16x16 k5 s1", 64, 96, 16, 1, 5, 1},
      {"64x48x16x16 s1 m2", 64, 48, 16, 2, 3, 1},
  };

  for (const auto& l : layers) {
    if (std::string(l.name).find(only) != std::string::npos) mt::kernels::Run(l, pool, reps);
  }
  return 0;
}
