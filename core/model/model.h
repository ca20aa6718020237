// A sequential network: owns the layers, one contiguous parameter buffer, one
// contiguous gradient buffer, the activations and the gradient ping-pong
// buffers, all sized once for a batch capacity. The step (SetBatch,
// ComputeGradients) allocates nothing.
//
// Placement: each layer runs on the backend chosen for it; the parameters,
// gradients and optimizer live on the model's home backend. A layer placed
// elsewhere works on a mirror of its parameters on its own backend; the
// model uploads mirrors before each pass and gathers mirrored gradients into
// the home buffer after each backward pass, and copies an activation (or its
// gradient) wherever consecutive layers sit on different backends. Every such
// copy is explicit and happens here, never inside a backend. In-place layers
// (ReLU, Dropout, Flatten) run where their input lives.
//
// A layer never runs on a backend that lacks one of its ops (Layer::Ops):
// it runs on the home backend instead, out of place if it is an in-place
// layer, and the loss likewise when the last layer's backend lacks it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/layers/layer.h"
#include "kernels/backend.h"

namespace mt {

// Wall-clock seconds spent per layer in one profiled pass (each backend is
// synchronised around each layer, so the figures are real, not queued).
struct LayerTimes {
  std::vector<double> forward, backward;  // per layer
  double loss = 0;                        // softmax cross-entropy
  double transfer = 0;                    // copies between backends
};

// A step that runs on the home backend because the backend it was placed on
// lacks ops it uses.
struct PlacementFallback {
  size_t step;             // layer index, or the layer count for the loss
  std::string name;        // the layer's name, or "loss"
  std::string wanted;      // the backend it was placed on
  kernels::OpSet missing;  // what that backend lacks
};

// Told during the backward pass as gradients become final, last layer
// first, so they can leave the device while the layers below still compute.
class GradientListener {
 public:
  virtual ~GradientListener() = default;
  // grads() from float `begin` to the end holds this pass's final values.
  virtual void OnGradientsFrom(size_t begin) = 0;
};

class Model {
 public:
  // `placement` names a backend per layer; empty means every layer on `home`.
  Model(Shape input_sample, std::vector<std::unique_ptr<Layer>> layers, kernels::Backend& home,
        std::vector<kernels::Backend*> placement = {});

  const Shape& input_shape() const { return shapes_.front(); }
  const Shape& output_shape() const { return shapes_.back(); }
  int num_classes() const { return output_shape()[0]; }
  size_t ParamCount() const { return param_count_; }
  // Where each layer's parameters begin in params() and grads(), ascending.
  const std::vector<size_t>& ParamOffsets() const { return param_offset_; }
  // Where parameters, gradients and the optimizer live.
  kernels::Backend& backend() const { return home_; }
  const std::vector<std::unique_ptr<Layer>>& layers() const { return layers_; }
  // The backend each layer runs on (in-place layers resolved to their input's,
  // layers whose backend lacks their ops moved to home).
  const std::vector<kernels::Backend*>& placement() const { return placement_; }
  // Where the loss runs: the last layer's backend, or home when that lacks it.
  kernels::Backend& loss_backend() const { return *loss_backend_; }
  // The steps moved to home for want of ops, in model order.
  const std::vector<PlacementFallback>& fallbacks() const { return fallbacks_; }
  // Whether any layer runs away from the home backend.
  bool Mixed() const { return mixed_; }
  // "conv1:opencl,relu1:opencl,...", for logs and reports; a step moved home
  // says why: "relu1:cpu(opencl lacks relu_forward+relu_backward)", and a
  // moved loss adds ",loss:cpu(...)".
  std::string PlacementSummary() const;

  kernels::View params() const { return kernels::WholeOf(*params_); }
  kernels::View grads() const { return kernels::WholeOf(*grads_); }
  void InitParams(uint64_t seed);
  void GetParams(float* host) const;
  void SetParams(const float* host);
  void GetGrads(float* host) const;

  // Makes room for batches of up to `capacity` samples (never shrinks).
  void Reserve(int capacity);
  int capacity() const { return capacity_; }
  // Device memory for parameters, gradients, activations and layer state
  // at a batch capacity; the growth per extra sample is MemoryBytes(2) -
  // MemoryBytes(1).
  size_t MemoryBytes(int capacity) const;

  // Copies n samples (NCHW floats and int32 labels) in as the current batch.
  void SetBatch(const float* images, const int32_t* labels, int n);
  // Forward, loss, backward on the current batch. Afterwards grads() holds
  // the gradient of the mean loss over the batch. Returns the summed loss.
  // With `times`, synchronises around every layer and records where the time
  // went (for placement; slower than an unprofiled pass). `listener` hears
  // after each parameterised layer which gradients are final; when layers
  // run off the home backend it hears only once, at the end.
  double ComputeGradients(uint64_t seed, LayerTimes* times = nullptr,
                          GradientListener* listener = nullptr);
  // Forward in evaluation mode; writes the predicted class of each sample of
  // the current batch to `predictions` (may be null). Returns the summed loss.
  double Evaluate(int32_t* predictions);

 private:
  // A contiguous range of parameters [begin, end) mirrored on another backend.
  struct Mirror {
    kernels::Backend* backend;
    size_t begin, end;
    std::unique_ptr<kernels::Buffer> params, grads;
  };
  // Per backend in use: the gradient ping-pong buffers.
  struct GradPair {
    kernels::Backend* backend;
    std::unique_ptr<kernels::Buffer> ping, pong;
  };

  // Steps are the layers, then the loss (step layers_.size()).
  Tensor Activation(int i, int n) const;  // i = 0 is the input, i = k is layer k-1's output
  Tensor LayerInput(int i, int n) const;  // step i's input on step i's backend
  kernels::Backend& SlotBackend(int i) const { return *placement_[i == 0 ? 0 : i - 1]; }
  kernels::Backend& StepBackend(size_t i) const {
    return i < layers_.size() ? *placement_[i] : *loss_backend_;
  }
  kernels::Backend& LossBackend() const { return *loss_backend_; }
  // Whether layer i writes over its input (an in-place layer on its input's backend).
  bool RunsInPlace(size_t i) const {
    return layers_[i]->InPlace() && (i == 0 || placement_[i] == placement_[i - 1]);
  }
  // `wanted` when it has every op of `ops`, else home (recorded in fallbacks_).
  kernels::Backend* Supporting(kernels::Backend* wanted, kernels::OpSet ops, size_t step,
                               const std::string& name);
  // Copies step i's input onto its backend when it lives elsewhere.
  void BridgeIn(size_t i, LayerTimes* times);
  GradPair& GradsOn(kernels::Backend* b);
  double ForwardAndLoss(const ForwardContext& ctx, LayerTimes* times);
  void UploadMirrors();
  void GatherMirroredGrads();
  // Copies src (on `from`) to dst (on `to`) through host staging.
  void Transfer(kernels::Backend& from, kernels::View src, kernels::Backend& to, kernels::View dst);

  kernels::Backend& home_;
  std::vector<std::unique_ptr<Layer>> layers_;
  std::vector<kernels::Backend*> placement_;  // per layer
  kernels::Backend* loss_backend_ = nullptr;
  std::vector<PlacementFallback> fallbacks_;
  std::vector<Shape> shapes_;         // per-sample, layers_.size() + 1 entries
  std::vector<int> act_slot_;         // which activation buffer holds shapes_[i]
  std::vector<size_t> param_offset_;  // per layer
  std::vector<std::unique_ptr<kernels::Buffer>> act_buffers_;
  // bridges_[i]: step i's input copied onto its backend (null when the
  // producer runs on the same backend).
  std::vector<std::unique_ptr<kernels::Buffer>> bridges_;
  std::vector<GradPair> grad_pairs_;
  std::vector<Mirror> mirrors_;
  std::unique_ptr<kernels::Buffer> labels_, predictions_;
  std::unique_ptr<kernels::Buffer> params_, grads_;
  std::vector<float> staging_;  // host side of every cross-backend copy
  size_t param_count_ = 0;
  size_t max_activation_ = 0;  // largest per-sample activation count
  int capacity_ = 0;
  int batch_ = 0;
  bool mixed_ = false;
};

}  // namespace mt
