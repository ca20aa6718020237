// A sequential network on one backend: owns the layers, one contiguous
// parameter buffer, one contiguous gradient buffer, the activations and two
// ping-pong gradient buffers, all sized once for a batch capacity. The step
// (SetBatch, ComputeGradients) allocates nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/layers/layer.h"
#include "kernels/backend.h"

namespace mt {

class Model {
 public:
  Model(Shape input_sample, std::vector<std::unique_ptr<Layer>> layers, kernels::Backend& backend);

  const Shape& input_shape() const { return shapes_.front(); }
  const Shape& output_shape() const { return shapes_.back(); }
  int num_classes() const { return output_shape()[0]; }
  size_t ParamCount() const { return param_count_; }
  kernels::Backend& backend() const { return backend_; }
  const std::vector<std::unique_ptr<Layer>>& layers() const { return layers_; }

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
  double ComputeGradients(uint64_t seed);
  // Forward in evaluation mode; writes the predicted class of each sample of
  // the current batch to `predictions` (may be null). Returns the summed loss.
  double Evaluate(int32_t* predictions);

 private:
  Tensor Activation(int i, int n) const;  // i = 0 is the input, i = k is layer k-1's output
  double ForwardAndLoss(const ForwardContext& ctx);

  kernels::Backend& backend_;
  std::vector<std::unique_ptr<Layer>> layers_;
  std::vector<Shape> shapes_;      // per-sample, layers_.size() + 1 entries
  std::vector<int> act_slot_;      // which activation buffer holds shapes_[i]
  std::vector<std::unique_ptr<kernels::Buffer>> act_buffers_;
  std::unique_ptr<kernels::Buffer> grad_ping_, grad_pong_, labels_, predictions_;
  std::unique_ptr<kernels::Buffer> params_, grads_;
  size_t param_count_ = 0;
  size_t max_activation_ = 0;  // largest per-sample activation count
  int capacity_ = 0;
  int batch_ = 0;
};

}  // namespace mt
