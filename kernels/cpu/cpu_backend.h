// The CPU backend: host memory, Eigen GEMM, direct (stride 1) or im2col
// convolution, and loops split over a persistent thread pool.
//
// Ops take their memory from the views they are given; the one exception is
// Gemm's packing scratch, which grows the first time a larger product runs,
// so a steady-state training step never touches the allocator. A conv
// workspace sized by ConvWorkspaceCount for batch B serves every batch <= B.
// Results depend on the thread count (the split of sums over the batch) but
// never on timing: partial sums are reduced in a fixed order.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "kernels/backend.h"
#include "kernels/cpu/cpu_buffer.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/thread_pool.h"

namespace mt::kernels {

class CpuBackend : public Backend {
 public:
  // threads: workers for the big ops, counting the calling thread.
  explicit CpuBackend(int threads = 1);
  ~CpuBackend() override;

  int threads() const { return pool_.size(); }
  // The pool the ops run on, for host-side work (batch assembly) that wants
  // the same threads without oversubscribing the cores.
  ThreadPool& pool() { return pool_; }

  // The host address of a view's first element, for code that reads or writes
  // CPU buffers directly. The view must come from a CpuBackend; an empty view
  // with no buffer gives nullptr.
  static float* Data(View v);
  // The same for index buffers (labels, argmax), which hold int32.
  static int32_t* Int32Data(View v);

  std::string Name() const override { return "cpu"; }
  OpSet SupportedOps() const override;

  std::unique_ptr<Buffer> Allocate(size_t count) override;
  // The bytes its live buffers hold (4 per element, before alignment): what
  // the memory predictions (Model::MemoryBytes) are checked against.
  size_t AllocatedBytes() const { return allocated_bytes_; }
  void Upload(const void* host, View dst) override;
  void Download(View src, void* host) override;
  void Copy(View src, View dst) override;
  void Fill(View dst, float value) override;
  void Synchronize() override {}

  void Gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, View a, View b,
            float beta, View c) override;
  void Axpy(float alpha, View x, View y) override;
  void Scale(float alpha, View x) override;

  size_t ConvWorkspaceCount(const ConvGeometry& g) const override;
  void Conv2dForward(const ConvGeometry& g, View in, View weight, View bias, View out,
                     View workspace) override;
  void Conv2dBackward(const ConvGeometry& g, View in, View weight, View d_out, View d_in,
                      View d_weight, View d_bias, View workspace) override;

  void MaxPoolForward(const PoolGeometry& g, View in, View out, View argmax) override;
  void MaxPoolBackward(const PoolGeometry& g, View d_out, View argmax, View d_in) override;
  void AvgPoolForward(const PoolGeometry& g, View in, View out) override;
  void AvgPoolBackward(const PoolGeometry& g, View d_out, View d_in) override;
  void GlobalAvgPoolForward(View in, View out, int planes, int inner) override;
  void GlobalAvgPoolBackward(View d_out, View d_in, int planes, int inner) override;

  void BatchNormForwardTraining(const BatchNormGeometry& g, View x, View scale, View shift,
                                View running_mean, View running_var, View save_mean,
                                View save_invstd, View y) override;
  void BatchNormForwardInference(const BatchNormGeometry& g, View x, View scale, View shift,
                                 View running_mean, View running_var, View save_invstd,
                                 View y) override;
  void BatchNormBackward(const BatchNormGeometry& g, View x, View d_y, View scale, View save_mean,
                         View save_invstd, bool batch_stats, View d_x, View d_scale,
                         View d_shift) override;

  void AddBias(View x, View bias, int outer, int channels, int inner) override;
  void BiasGrad(View d_x, View d_bias, int outer, int channels, int inner) override;
  void ReluForward(View in, View out) override;
  void ReluBackward(View out, View d_out, View d_in) override;
  void ClipForward(View in, View out, float lo, float hi) override;
  void ClipBackward(View out, View d_out, View d_in, float lo, float hi) override;
  // In cpu_activation.cc.
  void ActivationForward(Activation f, const ActivationParams& p, View in, View out) override;
  void ActivationBackward(Activation f, const ActivationParams& p, View in, View d_out,
                          View d_in) override;
  void DropoutForward(View in, View out, View mask, float rate, uint64_t seed) override;
  void DropoutBackward(View d_out, View mask, float rate, View d_in) override;
  double SoftmaxCrossEntropy(View logits, View labels, int n, int classes, View d_logits) override;
  void ArgmaxRows(View logits, int n, int classes, View out) override;

  void SgdUpdate(const SgdHyper& h, View params, View grads, View velocity) override;
  void AdamUpdate(const AdamHyper& h, View params, View grads, View m, View v) override;

 private:
  // Runs fn(begin, end) over [0, n) on the caller when n is small, else split
  // over the pool in 16-element-aligned chunks.
  template <class Fn>
  void ForEachRange(size_t n, Fn&& fn) {
    if (n < kParallelElements || pool_.size() == 1) {
      fn(size_t{0}, n);
      return;
    }
    const size_t blocks = (n + 15) / 16;
    pool_.ParallelFor(static_cast<int64_t>(blocks), [&](int64_t b, int64_t e, int) {
      fn(static_cast<size_t>(b) * 16, std::min(static_cast<size_t>(e) * 16, n));
    });
  }
  // Below this many elements an elementwise op takes a few microseconds on one
  // core, comparable to handing chunks to the helpers. Larger ops split even
  // when memory-bound: with chunks that follow the same split as the op that
  // wrote the data, each core reads what is already in its own cache (serial
  // ops on two cores were 2-3x slower than split ones for that reason).
  static constexpr size_t kParallelElements = size_t{1} << 15;

  ThreadPool pool_;
  std::atomic<size_t> allocated_bytes_{0};
  // Packing buffers for Gemm; the mutex keeps two threads that share this
  // backend from packing into them at once.
  std::mutex gemm_mu_;
  GemmScratch gemm_scratch_;
};

}  // namespace mt::kernels
