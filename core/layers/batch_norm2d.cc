#include "core/layers/batch_norm2d.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/layers/layer_registry.h"
#include "core/layers/size_limits.h"
#include "kernels/batch_norm_clip.h"
#include "kernels/batch_norm_replay.h"

namespace mt {

BatchNorm2D::BatchNorm2D(float epsilon, float momentum) {
  if (epsilon == 0.0f) epsilon = kDefaultEpsilon;
  if (momentum == 0.0f) momentum = kDefaultMomentum;
  // Negated comparisons so that NaN is refused too.
  if (!(epsilon > 0.0f) || !std::isfinite(epsilon))
    throw std::invalid_argument("batchnorm: epsilon must be positive, got " +
                                std::to_string(epsilon));
  if (!(momentum > 0.0f && momentum <= 1.0f))
    throw std::invalid_argument("batchnorm: momentum must be in (0, 1], got " +
                                std::to_string(momentum));
  geom_.epsilon = epsilon;
  geom_.momentum = momentum;
}

Shape BatchNorm2D::Setup(const Shape& in) {
  if (in.rank() == 3) {
    geom_.channels = in[0];
    geom_.inner = static_cast<int>(CheckedElements({in[1], in[2]}, "batchnorm: a plane"));
  } else if (in.rank() == 1) {
    geom_.channels = in[0];
    geom_.inner = 1;
  } else {
    throw std::invalid_argument("batchnorm: needs a CxHxW or a flat input, got " + in.ToString());
  }
  return in;
}

kernels::OpSet BatchNorm2D::Ops() const {
  if (clips_) return kernels::BatchNormClipOps();
  return {kernels::Op::kBatchNormForwardTraining, kernels::Op::kBatchNormForwardInference,
          kernels::Op::kBatchNormBackward};
}

void BatchNorm2D::FuseClip(float lo, float hi) {
  clips_ = true;
  clip_lo_ = lo;
  clip_hi_ = hi;
}

kernels::BatchNormGeometry BatchNorm2D::GeometryFor(int batch) const {
  kernels::BatchNormGeometry g = geom_;
  g.batch = batch;
  return g;
}

void BatchNorm2D::BindParams(kernels::View params, kernels::View grads) {
  const size_t c = geom_.channels;
  scale_ = params.Slice(0, c);
  shift_ = params.Slice(c, c);
  d_scale_ = grads.Slice(0, c);
  d_shift_ = grads.Slice(c, c);
}

void BatchNorm2D::InitParams(Rng&, float* host) const {
  std::fill(host, host + geom_.channels, 1.0f);
  std::fill(host + geom_.channels, host + 2 * geom_.channels, 0.0f);
}

void BatchNorm2D::BindRunningStats(kernels::View stats) {
  const size_t c = geom_.channels;
  running_mean_ = stats.Slice(0, c);
  running_var_ = stats.Slice(c, c);
}

void BatchNorm2D::InitRunningStats(float* host) const {
  std::fill(host, host + geom_.channels, 0.0f);
  std::fill(host + geom_.channels, host + 2 * geom_.channels, 1.0f);
}

void BatchNorm2D::Reshape(int) {
  const size_t c = geom_.channels;
  if (!saved_ || saved_->count() < 2 * c) saved_ = backend().Allocate(2 * c);
  save_mean_ = kernels::WholeOf(*saved_).Slice(0, c);
  save_invstd_ = kernels::WholeOf(*saved_).Slice(c, c);
  replays_in_one_pass_ = backend().SupportedOps().Has(kernels::kBatchNormReplay.op());
}

void BatchNorm2D::Forward(const Tensor& in, const Tensor& out, const ForwardContext& ctx) {
  if (running_mean_.empty() || !saved_)
    throw std::logic_error("batchnorm: running statistics or workspace missing (" + name() + ")");
  kernels::BatchNormGeometry g = GeometryFor(in.batch());
  const bool batch_stats = ctx.training && !frozen();
  if (ctx.replay && batch_stats && used_batch_stats_ && replays_in_one_pass_) {
    // The statistics saved by the training pass replayed, from the same input.
    kernels::kBatchNormReplay(backend(), g, in.view, scale_, shift_, save_mean_, save_invstd_,
                              out.view, clips_, clip_lo_, clip_hi_);
    return;
  }
  if (ctx.replay) g.momentum = 0.0f;  // running = 1 * running + 0 * batch: unchanged
  used_batch_stats_ = batch_stats;
  if (clips_ && used_batch_stats_) {
    kernels::kBatchNormClipForwardTraining(backend(), g, in.view, scale_, shift_, running_mean_,
                                           running_var_, save_mean_, save_invstd_, out.view,
                                           clip_lo_, clip_hi_);
  } else if (clips_) {
    kernels::kBatchNormClipForwardInference(backend(), g, in.view, scale_, shift_, running_mean_,
                                            running_var_, save_invstd_, out.view, clip_lo_,
                                            clip_hi_);
  } else if (used_batch_stats_) {
    backend().BatchNormForwardTraining(g, in.view, scale_, shift_, running_mean_, running_var_,
                                       save_mean_, save_invstd_, out.view);
  } else {
    backend().BatchNormForwardInference(g, in.view, scale_, shift_, running_mean_, running_var_,
                                        save_invstd_, out.view);
  }
}

void BatchNorm2D::Backward(const Tensor& in, const Tensor&, const Tensor& d_out,
                           const Tensor& d_in) {
  // A frozen layer's parameter gradients stay as they are (zero).
  const bool params = !frozen();
  if (d_in.view.empty() && !params) return;
  // After an evaluation-mode pass the map was affine in the running mean.
  const kernels::View mean = used_batch_stats_ ? save_mean_ : running_mean_;
  const kernels::View d_scale = params ? d_scale_ : kernels::View{};
  const kernels::View d_shift = params ? d_shift_ : kernels::View{};
  if (clips_) {
    kernels::kBatchNormClipBackward(backend(), GeometryFor(in.batch()), in.view, d_out.view, scale_,
                                    shift_, mean, save_invstd_, used_batch_stats_, d_in.view,
                                    d_scale, d_shift, clip_lo_, clip_hi_);
    return;
  }
  backend().BatchNormBackward(GeometryFor(in.batch()), in.view, d_out.view, scale_, mean,
                              save_invstd_, used_batch_stats_, d_in.view, d_scale, d_shift);
}

MT_REGISTER_LAYER_KIND(LayerKind{
    proto::Layer::kBatchnorm,
    [](const proto::Layer& l) -> std::unique_ptr<Layer> {
      const auto& b = l.batchnorm();
      return std::make_unique<BatchNorm2D>(b.epsilon() ? b.epsilon() : 1e-5f,
                                           b.momentum() ? b.momentum() : 0.1f);
    },
    // Scale and shift per element.
    [](const proto::Layer&, const std::vector<Shape>&, const Shape& out) -> int64_t {
      return 2 * static_cast<int64_t>(out.count());
    },
    R"(layer { name: "probe" batchnorm { epsilon: 0.001 } })",
    {}});

}  // namespace mt
