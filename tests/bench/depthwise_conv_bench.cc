// Depthwise convolution on the CPU: the direct depthwise kernels against the
// grouped im2col + GEMM path (what depthwise layers would run otherwise) and
// a plain loop nest, forward and backward (d_in, d_weight, d_bias), on
// MobileNetV2-sized layers for 32x32 inputs. Prints milliseconds per call
// (median of --reps) and the effective bandwidth of the depthwise kernels.
//
//   depthwise_conv_bench [threads (default: all cores)] [reps (default 30)]
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

double MedianMs(int reps, const std::function<void()>& f) {
  f();  // warm-up: caches, pool threads, page faults
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return t[t.size() / 2];
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

void NaiveBackward(const ConvGeometry& g, const float* in, const float* w, const float* dy,
                   float* dx, float* dw, float* db) {
  const int oh = g.out_h(), ow = g.out_w(), k = g.kernel, m = g.out_c / g.in_c;
  std::fill(dx, dx + size_t(g.batch) * g.in_size(), 0.0f);
  std::fill(dw, dw + g.weight_count(), 0.0f);
  std::fill(db, db + g.out_c, 0.0f);
  for (int n = 0; n < g.batch; ++n) {
    for (int o = 0; o < g.out_c; ++o) {
      const size_t in_plane = (size_t(n) * g.in_c + o / m) * g.in_h * g.in_w;
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
              dw[o * k * k + ky * k + kx] += d * in[in_plane + y * g.in_w + x];
              dx[in_plane + y * g.in_w + x] += d * w[o * k * k + ky * k + kx];
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

  const double dw_f = MedianMs(reps, [&] {
    DepthwiseConvForward(pool, g, in.data(), w.data(), b.data(), out.data(), ws_dw.data());
  });
  const double dw_b = MedianMs(reps, [&] {
    DepthwiseConvBackward(pool, g, in.data(), w.data(), dy.data(), dx.data(), dw.data(), db.data(),
                          ws_dw.data());
  });
  const double gr_f = MedianMs(reps, [&] {
    GroupedConvForward(pool, g, in.data(), w.data(), b.data(), out.data(), ws_gr.data());
  });
  const double gr_b = MedianMs(reps, [&] {
    GroupedConvBackward(pool, g, in.data(), w.data(), dy.data(), dx.data(), dw.data(), db.data(),
                        ws_gr.data());
  });
  const int naive_reps = std::max(3, reps / 5);
  const double nv_f =
      MedianMs(naive_reps, [&] { NaiveForward(g, in.data(), w.data(), b.data(), out.data()); });
  const double nv_b = MedianMs(naive_reps, [&] {
    NaiveBackward(g, in.data(), w.data(), dy.data(), dx.data(), dw.data(), db.data());
  });
  // Bytes the step must move at least: forward reads in, writes out;
  // backward reads in and d_out, writes d_in.
  const double fwd_bytes = 4.0 * (in.size() + out.size());
  const double bwd_bytes = 4.0 * (2 * in.size() + dy.size());
  std::printf(
      "%-28s fwd %7.3f ms (%5.1f GB/s) grouped %7.3f naive %7.3f | bwd %7.3f ms (%5.1f GB/s) "
      "grouped %7.3f naive %7.3f | fwd+bwd x%.1f vs grouped, x%.1f vs naive\n",
      l.name, dw_f, fwd_bytes / dw_f / 1e6, gr_f, nv_f, dw_b, bwd_bytes / dw_b / 1e6, gr_b, nv_b,
      (gr_f + gr_b) / (dw_f + dw_b), (nv_f + nv_b) / (dw_f + dw_b));
}

}  // namespace
}  // namespace mt::kernels

int main(int argc, char** argv) {
  const int threads =
      argc > 1 ? std::atoi(argv[1]) : static_cast<int>(std::thread::hardware_concurrency());
  const int reps = argc > 2 ? std::atoi(argv[2]) : 30;
  mt::kernels::ThreadPool pool(threads);
  std::printf("depthwise conv, %d thread(s), median of %d\n", pool.size(), reps);
  // The brief's reference shape, then the depthwise layers of
  // tests/bench/mobilenet_tiny_torch.py's "mobilenet-v2-style" net at batch
  // 64, then a 5x5 kernel and a channel multiplier of 2.
  const mt::kernels::Layer layers[] = {
      {"64x96x16x16 k3 s1", 64, 96, 16, 1, 3, 1},
      {"v2: 64x16x32x32 k3 s1", 64, 16, 32, 1, 3, 1},
      {"v2: 64x32x32x32 k3 s2", 64, 32, 32, 1, 3, 2},
      {"v2: 64x64x16x16 k3 s1", 64, 64, 16, 1, 3, 1},
      {"v2: 64x64x16x16 k3 s2", 64, 64, 16, 1, 3, 2},
      {"v2: 64x96x8x8 k3 s1", 64, 96, 8, 1, 3, 1},
      {"v2: 64x96x8x8 k3 s2", 64, 96, 8, 1, 3, 2},
      {"v2: 64x128x4x4 k3 s1", 64, 128, 4, 1, 3, 1},
      {"v2: 64x96x4x4 k3 s1", 64, 96, 4, 1, 3, 1},
      {"64x96x16x16 k5 s1", 64, 96, 16, 1, 5, 1},
      {"64x48x16x16 k3 s1 m2", 64, 48, 16, 2, 3, 1},
  };

  for (const auto& l : layers) mt::kernels::Run(l, pool, reps);
  return 0;
}
