#include "core/model/model.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/util/rng.h"
#include "kernels/dropout_hash.h"

namespace mt {

Model::Model(Shape input_sample, std::vector<std::unique_ptr<Layer>> layers,
             kernels::Backend& backend)
    : backend_(backend), layers_(std::move(layers)) {
  if (layers_.empty()) throw std::invalid_argument("model: no layers");
  shapes_.push_back(input_sample);
  act_slot_.push_back(0);
  int slots = 1;
  std::vector<size_t> offsets;
  for (size_t i = 0; i < layers_.size(); ++i) {
    Layer& layer = *layers_[i];
    layer.set_backend(&backend_);
    if (layer.name().empty()) layer.set_name(std::string(layer.Type()) + std::to_string(i + 1));
    try {
      shapes_.push_back(layer.Setup(shapes_.back()));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("layer " + std::to_string(i + 1) + " (" + layer.name() +
                                  "): " + e.what());
    }
    act_slot_.push_back(layer.InPlace() ? act_slot_.back() : slots++);
    offsets.push_back(param_count_);
    param_count_ += layer.ParamCount();
  }
  if (output_shape().rank() != 1)
    throw std::invalid_argument("model: the last layer must give flat logits, got " +
                                output_shape().ToString());
  for (const Shape& s : shapes_) max_activation_ = std::max(max_activation_, s.count());
  act_buffers_.resize(slots);

  params_ = backend_.Allocate(std::max<size_t>(param_count_, 1));
  grads_ = backend_.Allocate(std::max<size_t>(param_count_, 1));
  for (size_t i = 0; i < layers_.size(); ++i) {
    const size_t n = layers_[i]->ParamCount();
    layers_[i]->BindParams(params().Slice(offsets[i], n), grads().Slice(offsets[i], n));
  }
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

void Model::GetParams(float* host) const { backend_.Download(params().Slice(0, param_count_), host); }
void Model::SetParams(const float* host) { backend_.Upload(host, params().Slice(0, param_count_)); }
void Model::GetGrads(float* host) const { backend_.Download(grads().Slice(0, param_count_), host); }

void Model::Reserve(int capacity) {
  if (capacity <= capacity_) return;
  for (size_t i = 0; i < shapes_.size(); ++i) {
    if (i > 0 && act_slot_[i] == act_slot_[i - 1]) continue;
    act_buffers_[act_slot_[i]] = backend_.Allocate(shapes_[i].count() * capacity);
  }
  grad_ping_ = backend_.Allocate(max_activation_ * capacity);
  grad_pong_ = backend_.Allocate(max_activation_ * capacity);
  labels_ = backend_.Allocate(capacity);
  predictions_ = backend_.Allocate(capacity);
  for (auto& layer : layers_) layer->Reshape(capacity);
  capacity_ = capacity;
}

size_t Model::MemoryBytes(int capacity) const {
  size_t per_sample = 2 * max_activation_ + 2;  // gradient ping-pong, labels, predictions
  for (size_t i = 0; i < shapes_.size(); ++i)
    if (i == 0 || act_slot_[i] != act_slot_[i - 1]) per_sample += shapes_[i].count();
  size_t bytes = (2 * param_count_ + per_sample * capacity) * sizeof(float);
  for (const auto& layer : layers_) bytes += layer->StateBytes(capacity);
  return bytes;
}

Tensor Model::Activation(int i, int n) const {
  const Shape s = shapes_[i].WithBatch(n);
  return Tensor{s, kernels::View{act_buffers_[act_slot_[i]].get(), 0, s.count()}};
}

void Model::SetBatch(const float* images, const int32_t* labels, int n) {
  if (n <= 0 || n > capacity_)
    throw std::invalid_argument("model: batch of " + std::to_string(n) + " outside capacity " +
                                std::to_string(capacity_));
  batch_ = n;
  backend_.Upload(images, Activation(0, n).view);
  backend_.Upload(labels, kernels::View{labels_.get(), 0, static_cast<size_t>(n)});
}

double Model::ForwardAndLoss(const ForwardContext& ctx) {
  for (size_t i = 0; i < layers_.size(); ++i) {
    ForwardContext layer_ctx = ctx;
    layer_ctx.seed = kernels::MixBits(ctx.seed) ^ kernels::MixBits(i + 1);
    layers_[i]->Forward(Activation(i, batch_), Activation(i + 1, batch_), layer_ctx);
  }
  const Tensor logits = Activation(static_cast<int>(layers_.size()), batch_);
  return backend_.SoftmaxCrossEntropy(logits.view, kernels::View{labels_.get(), 0, static_cast<size_t>(batch_)},
                                      batch_, num_classes(),
                                      kernels::View{grad_ping_.get(), 0, logits.count()});
}

double Model::ComputeGradients(uint64_t seed) {
  const double loss = ForwardAndLoss(ForwardContext{true, seed});
  kernels::Buffer* d_out = grad_ping_.get();
  kernels::Buffer* spare = grad_pong_.get();
  for (int i = static_cast<int>(layers_.size()) - 1; i >= 0; --i) {
    Layer& layer = *layers_[i];
    const Shape out_shape = shapes_[i + 1].WithBatch(batch_);
    const Shape in_shape = shapes_[i].WithBatch(batch_);
    kernels::Buffer* d_in = layer.InPlace() ? d_out : spare;
    const Tensor d_out_t{out_shape, kernels::View{d_out, 0, out_shape.count()}};
    // The first layer's input gradient is never used, so it is never computed.
    const Tensor d_in_t{in_shape, i == 0 ? kernels::View{} : kernels::View{d_in, 0, in_shape.count()}};
    layer.Backward(Activation(i, batch_), Activation(i + 1, batch_), d_out_t, d_in_t);
    if (d_in != d_out) std::swap(d_out, spare);
  }
  return loss;
}

double Model::Evaluate(int32_t* predictions) {
  const double loss = ForwardAndLoss(ForwardContext{false, 0});
  if (predictions) {
    const Tensor logits = Activation(static_cast<int>(layers_.size()), batch_);
    kernels::View out{predictions_.get(), 0, static_cast<size_t>(batch_)};
    backend_.ArgmaxRows(logits.view, batch_, num_classes(), out);
    backend_.Download(out, predictions);
  }
  return loss;
}

}  // namespace mt
