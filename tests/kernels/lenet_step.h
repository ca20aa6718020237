// One LeNet-5 training step (batch b, 28x28x1 input, conv 1->6 5x5 pad 2,
// pool 2, conv 6->16 5x5, pool 2, fc 400-120-84-10, softmax cross-entropy,
// SGD with momentum) written directly against the Backend ops, as a list of
// named ops. Used to time the ops and to check that a steady-state step
// never allocates.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/cpu_backend.h"

namespace mt::kernels::test_support {

class LeNetStep {
 public:
  LeNetStep(CpuBackend& be, int batch) : be_(be), batch_(batch) {
    g1_ = {batch, 1, 28, 28, 6, 5, 1, 2};
    q1_ = {batch, 6, 28, 28, 2, 2};
    g2_ = {batch, 6, 14, 14, 16, 5, 1, 0};
    q2_ = {batch, 16, 10, 10, 2, 2};
    // One flat parameter buffer and one flat gradient buffer, as layers keep them.
    counts_ = {size_t(g1_.weight_count()), 6,   size_t(g2_.weight_count()), 16,
               size_t(kF2) * kF1,          kF2, size_t(kF3) * kF2,          kF3,
               size_t(kF4) * kF3,          kF4};
    size_t total = 0;
    for (size_t c : counts_) {
      offsets_.push_back(total);
      total += c;
    }
    params_ = Random(total, 0.1f);
    grads_ = be.Allocate(total);
    velocity_ = be.Allocate(total);
    x_ = Random(size_t(batch) * 784, 1.0f);
    labels_ = be.Allocate(batch);
    for (int i = 0; i < batch; ++i) CpuBackend::Int32Data(WholeOf(*labels_))[i] = i % 10;
    ws_ = be.Allocate(std::max(be.ConvWorkspaceCount(g1_), be.ConvWorkspaceCount(g2_)));
    a1_ = be.Allocate(size_t(batch) * g1_.out_size());
    da1_ = be.Allocate(a1_->count());
    p1_ = be.Allocate(size_t(batch) * q1_.out_size());
    dp1_ = be.Allocate(p1_->count());
    am1_ = be.Allocate(p1_->count());
    a2_ = be.Allocate(size_t(batch) * g2_.out_size());
    da2_ = be.Allocate(a2_->count());
    p2_ = be.Allocate(size_t(batch) * q2_.out_size());
    dp2_ = be.Allocate(p2_->count());
    am2_ = be.Allocate(p2_->count());
    h1_ = be.Allocate(size_t(batch) * kF2);
    dh1_ = be.Allocate(h1_->count());
    h2_ = be.Allocate(size_t(batch) * kF3);
    dh2_ = be.Allocate(h2_->count());
    h3_ = be.Allocate(size_t(batch) * kF4);
    dh3_ = be.Allocate(h3_->count());
    BuildOps();
  }

  void Run() {
    for (auto& op : ops_) op.second();
  }
  std::vector<std::pair<std::string, std::function<void()>>>& ops() { return ops_; }
  double loss() const { return loss_; }

 private:
  static constexpr int kF1 = 400, kF2 = 120, kF3 = 84, kF4 = 10;

  std::unique_ptr<Buffer> Random(size_t n, float scale) {
    auto b = be_.Allocate(n);
    std::mt19937 rng(static_cast<uint32_t>(n));
    std::normal_distribution<float> normal(0.0f, scale);
    float* p = CpuBackend::Data(WholeOf(*b));
    for (size_t i = 0; i < n; ++i) p[i] = normal(rng);
    return b;
  }
  View P(int i) { return WholeOf(*params_).Slice(offsets_[i], counts_[i]); }
  View G(int i) { return WholeOf(*grads_).Slice(offsets_[i], counts_[i]); }
  static View V(const std::unique_ptr<Buffer>& b) { return WholeOf(*b); }

  void BuildOps() {
    CpuBackend& be = be_;
    const int b = batch_;
    const View W = V(ws_);
    ops_ = {
        {"conv1 fwd", [=, &be] { be.Conv2dForward(g1_, V(x_), P(0), P(1), V(a1_), W); }},
        {"relu1 fwd", [=, &be] { be.ReluForward(V(a1_), V(a1_)); }},
        {"pool1 fwd", [=, &be] { be.MaxPoolForward(q1_, V(a1_), V(p1_), V(am1_)); }},
        {"conv2 fwd", [=, &be] { be.Conv2dForward(g2_, V(p1_), P(2), P(3), V(a2_), W); }},
        {"relu2 fwd", [=, &be] { be.ReluForward(V(a2_), V(a2_)); }},
        {"pool2 fwd", [=, &be] { be.MaxPoolForward(q2_, V(a2_), V(p2_), V(am2_)); }},
        {"fc1 fwd",
         [=, &be] {
           be.Gemm(false, true, b, kF2, kF1, 1, V(p2_), P(4), 0, V(h1_));
           be.AddBias(V(h1_), P(5), b, kF2, 1);
           be.ReluForward(V(h1_), V(h1_));
         }},
        {"fc2 fwd",
         [=, &be] {
           be.Gemm(false, true, b, kF3, kF2, 1, V(h1_), P(6), 0, V(h2_));
           be.AddBias(V(h2_), P(7), b, kF3, 1);
           be.ReluForward(V(h2_), V(h2_));
         }},
        {"fc3 fwd",
         [=, &be] {
           be.Gemm(false, true, b, kF4, kF3, 1, V(h2_), P(8), 0, V(h3_));
           be.AddBias(V(h3_), P(9), b, kF4, 1);
         }},
        {"softmax xent",
         [=, &be] { loss_ = be.SoftmaxCrossEntropy(V(h3_), V(labels_), b, kF4, V(dh3_)); }},
        {"fc3 bwd",
         [=, &be] {
           be.Gemm(true, false, kF4, kF3, b, 1, V(dh3_), V(h2_), 0, G(8));
           be.BiasGrad(V(dh3_), G(9), b, kF4, 1);
           be.Gemm(false, false, b, kF3, kF4, 1, V(dh3_), P(8), 0, V(dh2_));
           be.ReluBackward(V(h2_), V(dh2_), V(dh2_));
         }},
        {"fc2 bwd",
         [=, &be] {
           be.Gemm(true, false, kF3, kF2, b, 1, V(dh2_), V(h1_), 0, G(6));
           be.BiasGrad(V(dh2_), G(7), b, kF3, 1);
           be.Gemm(false, false, b, kF2, kF3, 1, V(dh2_), P(6), 0, V(dh1_));
           be.ReluBackward(V(h1_), V(dh1_), V(dh1_));
         }},
        {"fc1 bwd",
         [=, &be] {
           be.Gemm(true, false, kF2, kF1, b, 1, V(dh1_), V(p2_), 0, G(4));
           be.BiasGrad(V(dh1_), G(5), b, kF2, 1);
           be.Gemm(false, false, b, kF1, kF2, 1, V(dh1_), P(4), 0, V(dp2_));
         }},
        {"pool2 bwd", [=, &be] { be.MaxPoolBackward(q2_, V(dp2_), V(am2_), V(da2_)); }},
        {"relu2 bwd", [=, &be] { be.ReluBackward(V(a2_), V(da2_), V(da2_)); }},
        {"conv2 bwd",
         [=, &be] { be.Conv2dBackward(g2_, V(p1_), P(2), V(da2_), V(dp1_), G(2), G(3), W); }},
        {"pool1 bwd", [=, &be] { be.MaxPoolBackward(q1_, V(dp1_), V(am1_), V(da1_)); }},
        {"relu1 bwd", [=, &be] { be.ReluBackward(V(a1_), V(da1_), V(da1_)); }},
        {"conv1 bwd",
         [=, &be] { be.Conv2dBackward(g1_, V(x_), P(0), V(da1_), View{}, G(0), G(1), W); }},
        {"sgd",
         [=, &be] {
           be.SgdUpdate({0.01f, 0.9f, 0.0f}, V(params_), V(grads_), V(velocity_));
         }},
    };
  }

  CpuBackend& be_;
  int batch_;
  ConvGeometry g1_, g2_;
  PoolGeometry q1_, q2_;
  std::vector<size_t> counts_, offsets_;
  std::unique_ptr<Buffer> params_, grads_, velocity_, x_, labels_, ws_;
  std::unique_ptr<Buffer> a1_, da1_, p1_, dp1_, am1_, a2_, da2_, p2_, dp2_, am2_;
  std::unique_ptr<Buffer> h1_, dh1_, h2_, dh2_, h3_, dh3_;
  double loss_ = 0.0;
  std::vector<std::pair<std::string, std::function<void()>>> ops_;
};

}  // namespace mt::kernels::test_support
