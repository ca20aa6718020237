#include "core/model/model.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

#include "core/layers/size_limits.h"
#include "core/util/rng.h"
#include "kernels/dropout_hash.h"

namespace mt {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The loss on the training pass, the predictions on evaluation.
constexpr kernels::OpSet kLossOps{kernels::Op::kSoftmaxCrossEntropy, kernels::Op::kArgmaxRows};

}  // namespace

Model::Model(Shape input_sample, std::vector<std::unique_ptr<Layer>> layers, kernels::Backend& home,
             std::vector<kernels::Backend*> placement)
    : home_(home), layers_(std::move(layers)), placement_(std::move(placement)) {
  if (layers_.empty()) throw std::invalid_argument("model: no layers");
  if (placement_.empty()) placement_.assign(layers_.size(), &home_);
  if (placement_.size() != layers_.size())
    throw std::invalid_argument("model: placement names " + std::to_string(placement_.size()) +
                                " backends for " + std::to_string(layers_.size()) + " layers");
  for (int i = 0; i < input_sample.rank(); ++i) {
    if (input_sample[i] <= 0)
      throw std::invalid_argument("model: input " + input_sample.ToString() +
                                  " has a size below 1");
    int64_t n = 1;
    for (int k = 0; k <= i; ++k) n *= input_sample[k];  // below 2^28 * 2^31: no overflow
    if (n > kMaxLayerElements)
      throw std::invalid_argument("model: input " + input_sample.ToString() +
                                  " has more than 2^28 values per sample");
  }
  shapes_.push_back(input_sample);
  act_slot_.push_back(0);
  int slots = 1;
  for (size_t i = 0; i < layers_.size(); ++i) {
    Layer& layer = *layers_[i];
    if (!placement_[i])
      throw std::invalid_argument("model: no backend for layer " + std::to_string(i + 1));
    if (layer.name().empty()) layer.set_name(std::string(layer.Type()) + std::to_string(i + 1));
    // An in-place layer writes over its input, so it runs where that lives.
    if (layer.InPlace() && i > 0) placement_[i] = placement_[i - 1];
    placement_[i] = Supporting(placement_[i], layer.Ops(), i, layer.name());
    if (placement_[i] != &home_) mixed_ = true;
    layer.set_backend(placement_[i]);
    try {
      shapes_.push_back(layer.Setup(shapes_.back()));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("layer " + std::to_string(i + 1) + " (" + layer.name() +
                                  "): " + e.what());
    }
    act_slot_.push_back(RunsInPlace(i) ? act_slot_.back() : slots++);
    param_offset_.push_back(param_count_);
    param_count_ += layer.ParamCount();
  }
  if (output_shape().rank() != 1)
    throw std::invalid_argument("model: the last layer must give flat logits, got " +
                                output_shape().ToString());
  if (param_count_ > static_cast<size_t>(kMaxModelParams))
    throw std::invalid_argument("model: " + std::to_string(param_count_) +
                                " parameters, more than the 2^26 this build trains");
  for (const Shape& s : shapes_) max_activation_ = std::max(max_activation_, s.count());
  loss_backend_ = Supporting(placement_.back(), kLossOps, layers_.size(), "loss");
  act_buffers_.resize(slots);
  bridges_.resize(layers_.size() + 1);

  params_ = home_.Allocate(std::max<size_t>(param_count_, 1));
  grads_ = home_.Allocate(std::max<size_t>(param_count_, 1));
  // One mirror per run of consecutive parameterised layers on the same
  // foreign backend, so each pass moves a few contiguous ranges, not one per layer.
  for (size_t i = 0; i < layers_.size(); ++i) {
    const size_t n = layers_[i]->ParamCount();
    if (n == 0 || placement_[i] == &home_) continue;
    if (!mirrors_.empty() && mirrors_.back().backend == placement_[i] &&
        mirrors_.back().end == param_offset_[i])
      mirrors_.back().end += n;
    else
      mirrors_.push_back(
          Mirror{placement_[i], param_offset_[i], param_offset_[i] + n, nullptr, nullptr});
  }
  size_t staging = 0;
  for (Mirror& m : mirrors_) {
    m.params = m.backend->Allocate(m.end - m.begin);
    m.grads = m.backend->Allocate(m.end - m.begin);
    staging = std::max(staging, m.end - m.begin);
  }
  staging_.resize(staging);
  for (size_t i = 0; i < layers_.size(); ++i) {
    const size_t n = layers_[i]->ParamCount(), at = param_offset_[i];
    kernels::View p = params().Slice(at, n), g = grads().Slice(at, n);
    for (const Mirror& m : mirrors_)
      if (m.backend == placement_[i] && at >= m.begin && at + n <= m.end && n > 0) {
        p = kernels::WholeOf(*m.params).Slice(at - m.begin, n);
        g = kernels::WholeOf(*m.grads).Slice(at - m.begin, n);
      }
    layers_[i]->BindParams(p, g);
  }
}

kernels::Backend* Model::Supporting(kernels::Backend* wanted, kernels::OpSet ops, size_t step,
                                    const std::string& name) {
  const kernels::OpSet missing = ops - wanted->SupportedOps();
  if (missing.empty()) return wanted;
  const kernels::OpSet home_missing = ops - home_.SupportedOps();
  if (!home_missing.empty())
    throw std::invalid_argument(name + " needs " + home_missing.Names() +
                                ", which the home backend " + home_.Name() + " lacks");
  fallbacks_.push_back(PlacementFallback{step, name, wanted->Name(), missing});
  return &home_;
}

std::string Model::PlacementSummary() const {
  std::string s;
  auto fallback = fallbacks_.begin();
  for (size_t i = 0; i <= layers_.size(); ++i) {
    const bool moved = fallback != fallbacks_.end() && fallback->step == i;
    if (i == layers_.size() && !moved) break;
    if (i) s += ",";
    s += (i < layers_.size() ? layers_[i]->name() : "loss") + ":" + StepBackend(i).Name();
    if (moved) {
      s += "(" + fallback->wanted + " lacks " + fallback->missing.Names("+") + ")";
      ++fallback;
    }
  }
  return s;
}

void Model::InitParams(uint64_t seed) {
  std::vector<float> host(param_count_);
  size_t offset = 0;
  for (size_t i = 0; i < layers_.size(); ++i) {
    // One stream per layer, so adding a layer does not change the others.
    Rng rng(kernels::MixBits(seed) ^ kernels::MixBits(i + 1));
    layers_[i]->InitParams(rng, host.data() + offset);
    offset += layers_[i]->ParamCount();
  }
  SetParams(host.data());
}

void Model::GetParams(float* host) const { home_.Download(params().Slice(0, param_count_), host); }
void Model::SetParams(const float* host) { home_.Upload(host, params().Slice(0, param_count_)); }
void Model::GetGrads(float* host) const { home_.Download(grads().Slice(0, param_count_), host); }

Model::GradPair& Model::GradsOn(kernels::Backend* b) {
  for (GradPair& g : grad_pairs_)
    if (g.backend == b) return g;
  grad_pairs_.push_back(GradPair{b, nullptr, nullptr});
  return grad_pairs_.back();
}

void Model::Reserve(int capacity) {
  if (capacity <= capacity_) return;
  for (size_t i = 0; i < shapes_.size(); ++i) {
    if (i > 0 && act_slot_[i] == act_slot_[i - 1]) continue;
    act_buffers_[act_slot_[i]] =
        SlotBackend(static_cast<int>(i)).Allocate(shapes_[i].count() * capacity);
  }
  size_t staging = staging_.size();
  for (size_t i = 0; i <= layers_.size(); ++i) {
    if (&SlotBackend(static_cast<int>(i)) == &StepBackend(i)) continue;
    bridges_[i] = StepBackend(i).Allocate(shapes_[i].count() * capacity);
    // Forward carries the activation in, backward carries the gradient out
    // (the loss's is the size of its input).
    const size_t out = shapes_[std::min(i + 1, layers_.size())].count();
    staging = std::max(staging, std::max(shapes_[i].count(), out) * capacity);
  }
  if (Mixed()) staging = std::max(staging, max_activation_ * capacity);
  staging_.resize(staging);
  for (kernels::Backend* b : placement_) GradsOn(b);  // one pair per backend in use
  GradsOn(loss_backend_);
  for (GradPair& g : grad_pairs_) {
    g.ping = g.backend->Allocate(max_activation_ * capacity);
    g.pong = g.backend->Allocate(max_activation_ * capacity);
  }
  labels_ = LossBackend().Allocate(capacity);
  predictions_ = LossBackend().Allocate(capacity);
  for (auto& layer : layers_) layer->Reshape(capacity);
  capacity_ = capacity;
}

size_t Model::MemoryBytes(int capacity) const {
  std::vector<const kernels::Backend*> in_use;
  for (size_t i = 0; i <= layers_.size(); ++i)
    if (std::find(in_use.begin(), in_use.end(), &StepBackend(i)) == in_use.end())
      in_use.push_back(&StepBackend(i));
  size_t per_sample =
      2 * in_use.size() * max_activation_ + 2;  // gradient ping-pongs, labels, predictions
  for (size_t i = 0; i < shapes_.size(); ++i)
    if (i == 0 || act_slot_[i] != act_slot_[i - 1]) per_sample += shapes_[i].count();
  for (size_t i = 0; i <= layers_.size(); ++i)
    if (&SlotBackend(static_cast<int>(i)) != &StepBackend(i)) per_sample += shapes_[i].count();
  size_t fixed = 2 * param_count_;
  for (const Mirror& m : mirrors_) fixed += 2 * (m.end - m.begin);
  size_t bytes = (fixed + per_sample * capacity) * sizeof(float);
  for (const auto& layer : layers_) bytes += layer->StateBytes(capacity);
  return bytes;
}

Tensor Model::Activation(int i, int n) const {
  const Shape s = shapes_[i].WithBatch(n);
  return Tensor{s, kernels::View{act_buffers_[act_slot_[i]].get(), 0, s.count()}};
}

Tensor Model::LayerInput(int i, int n) const {
  if (!bridges_[i]) return Activation(i, n);
  const Shape s = shapes_[i].WithBatch(n);
  return Tensor{s, kernels::View{bridges_[i].get(), 0, s.count()}};
}

void Model::Transfer(kernels::Backend& from, kernels::View src, kernels::Backend& to,
                     kernels::View dst) {
  from.Download(src, staging_.data());
  to.Upload(staging_.data(), dst);
}

void Model::BridgeIn(size_t i, LayerTimes* times) {
  if (!bridges_[i]) return;
  const int si = static_cast<int>(i);
  const Clock::time_point t = times ? Clock::now() : Clock::time_point{};
  Transfer(SlotBackend(si), Activation(si, batch_).view, StepBackend(i),
           LayerInput(si, batch_).view);
  if (times) times->transfer += Since(t);
}

void Model::UploadMirrors() {
  for (Mirror& m : mirrors_)
    Transfer(home_, params().Slice(m.begin, m.end - m.begin), *m.backend,
             kernels::WholeOf(*m.params));
}

void Model::GatherMirroredGrads() {
  for (Mirror& m : mirrors_)
    Transfer(*m.backend, kernels::WholeOf(*m.grads), home_,
             grads().Slice(m.begin, m.end - m.begin));
}

void Model::SetBatch(const float* images, const int32_t* labels, int n) {
  if (n <= 0 || n > capacity_)
    throw std::invalid_argument("model: batch of " + std::to_string(n) + " outside capacity " +
                                std::to_string(capacity_));
  batch_ = n;
  SlotBackend(0).Upload(images, Activation(0, n).view);
  LossBackend().Upload(labels, kernels::View{labels_.get(), 0, static_cast<size_t>(n)});
}

double Model::ForwardAndLoss(const ForwardContext& ctx, LayerTimes* times) {
  Clock::time_point t;
  if (times) t = Clock::now();
  UploadMirrors();
  if (times) times->transfer += Since(t);
  for (size_t i = 0; i < layers_.size(); ++i) {
    const int li = static_cast<int>(i);
    BridgeIn(i, times);
    if (times) {
      placement_[i]->Synchronize();
      t = Clock::now();
    }
    ForwardContext layer_ctx = ctx;
    layer_ctx.seed = kernels::MixBits(ctx.seed) ^ kernels::MixBits(i + 1);
    layers_[i]->Forward(LayerInput(li, batch_), Activation(li + 1, batch_), layer_ctx);
    if (times) {
      placement_[i]->Synchronize();
      times->forward[i] = Since(t);
    }
  }
  BridgeIn(layers_.size(), times);
  if (times) t = Clock::now();
  const Tensor logits = LayerInput(static_cast<int>(layers_.size()), batch_);
  const double loss = LossBackend().SoftmaxCrossEntropy(
      logits.view, kernels::View{labels_.get(), 0, static_cast<size_t>(batch_)}, batch_,
      num_classes(), kernels::View{GradsOn(&LossBackend()).ping.get(), 0, logits.count()});
  if (times) times->loss = Since(t);
  return loss;
}

double Model::ComputeGradients(uint64_t seed, LayerTimes* times, GradientListener* listener) {
  if (times) {
    *times = LayerTimes{};
    times->forward.assign(layers_.size(), 0.0);
    times->backward.assign(layers_.size(), 0.0);
  }
  const double loss = ForwardAndLoss(ForwardContext{true, seed}, times);
  kernels::Backend* on = &LossBackend();
  kernels::Buffer* d_out = GradsOn(on).ping.get();
  kernels::Buffer* spare = GradsOn(on).pong.get();
  Clock::time_point t;
  for (int i = static_cast<int>(layers_.size()) - 1; i >= 0; --i) {
    Layer& layer = *layers_[i];
    const Shape out_shape = shapes_[i + 1].WithBatch(batch_);
    const Shape in_shape = shapes_[i].WithBatch(batch_);
    if (placement_[i] != on) {
      if (times) t = Clock::now();
      GradPair& g = GradsOn(placement_[i]);
      Transfer(*on, kernels::View{d_out, 0, out_shape.count()}, *placement_[i],
               kernels::View{g.ping.get(), 0, out_shape.count()});
      if (times) times->transfer += Since(t);
      on = placement_[i];
      d_out = g.ping.get();
      spare = g.pong.get();
    }
    if (times) {
      on->Synchronize();
      t = Clock::now();
    }
    kernels::Buffer* d_in = RunsInPlace(i) ? d_out : spare;
    const Tensor d_out_t{out_shape, kernels::View{d_out, 0, out_shape.count()}};
    // The first layer's input gradient is never used, so it is never computed.
    const Tensor d_in_t{in_shape,
                        i == 0 ? kernels::View{} : kernels::View{d_in, 0, in_shape.count()}};
    layer.Backward(LayerInput(i, batch_), Activation(i + 1, batch_), d_out_t, d_in_t);
    if (times) {
      on->Synchronize();
      times->backward[i] = Since(t);
    }
    if (d_in != d_out) std::swap(d_out, spare);
    // With every layer on the home backend, a layer's weight gradient is
    // final once its Backward has run there.
    if (listener && !mixed_ && layer.ParamCount() > 0) {
      home_.Synchronize();
      listener->OnGradientsFrom(param_offset_[i]);
    }
  }
  if (times) t = Clock::now();
  GatherMirroredGrads();
  if (times) times->transfer += Since(t);
  if (listener) {
    home_.Synchronize();
    listener->OnGradientsFrom(0);
  }
  return loss;
}

double Model::Evaluate(int32_t* predictions) {
  const double loss = ForwardAndLoss(ForwardContext{false, 0}, nullptr);
  if (predictions) {
    const Tensor logits = LayerInput(static_cast<int>(layers_.size()), batch_);
    kernels::View out{predictions_.get(), 0, static_cast<size_t>(batch_)};
    LossBackend().ArgmaxRows(logits.view, batch_, num_classes(), out);
    LossBackend().Download(out, predictions);
  }
  return loss;
}

}  // namespace mt
