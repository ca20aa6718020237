// The layer contract (after Caffe's SetUp -> Reshape -> Forward/Backward life):
//   Setup(per-sample input shape) once: fixes the output shape and the
//     parameter count;
//   BindParams: the layer's parameters and gradients are views into the
//     model's one contiguous parameter buffer and one gradient buffer;
//   Reshape(capacity) when the batch capacity grows: allocates the state it
//     keeps between passes once, so the steady-state step allocates nothing;
//   BindWorkspace: scratch for one call (WorkspaceFloats), shared by every
//     layer on the backend;
//   Forward / Backward on batches of at most `capacity` samples.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor/param_matrix.h"
#include "core/tensor/tensor.h"
#include "kernels/backend.h"

namespace mt {

class Rng;

struct ForwardContext {
  bool training = true;
  uint64_t seed = 0;  // per-step seed for stochastic layers (dropout)
  // A second run of this step's training forward (recomputation, before the
  // backward pass needs a dropped output): same inputs, same seed, and it
  // must give the same output without moving state (running statistics).
  bool replay = false;
};

class Layer {
 public:
  virtual ~Layer() = default;

  virtual const char* Type() const = 0;
  // Every backend op Forward and Backward call: the model runs the layer only
  // on a backend that has them all.
  virtual kernels::OpSet Ops() const = 0;
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  kernels::Backend& backend() const { return *backend_; }
  void set_backend(kernels::Backend* backend) { backend_ = backend; }

  virtual Shape Setup(const Shape& in_sample) = 0;
  virtual size_t ParamCount() const { return 0; }
  virtual void BindParams(kernels::View params, kernels::View grads) {}
  // Writes ParamCount() initial values to host memory.
  virtual void InitParams(Rng& rng, float* host) const {}
  // Which of its parameters form matrices (offsets within the layer's own):
  // what a low-rank encoding of the exchange may factor. The rest are vectors.
  virtual std::vector<ParamMatrix> ParamMatrices() const { return {}; }

  // Running statistics (batch norm's mean and variance): state the forward
  // pass updates in training and reads in evaluation, never trained by the
  // optimizer, kept beside the parameters in the model's one statistics buffer.
  virtual size_t RunningStatCount() const { return 0; }
  virtual void BindRunningStats(kernels::View stats) {}
  virtual void InitRunningStats(float* host) const {}

  // A frozen layer keeps its parameters: Backward leaves its weight gradients
  // as they are (zero) and computes only the input gradient, and a layer with
  // running statistics uses them in training too (as a fixed affine map).
  bool frozen() const { return frozen_; }
  void set_frozen(bool frozen) { frozen_ = frozen; }

  // The layer that does this one's work (a batch norm that clips its output
  // as the ReLU after it would, core/model/fusion.cc), or null. An absorbed
  // layer runs in place over that layer's output, and its Forward and
  // Backward do nothing: the output is already clipped, and the gradient
  // it would mask is masked by the absorbing layer's Backward.
  const Layer* absorbed_by() const { return absorbed_by_; }
  void set_absorbed_by(const Layer* layer) { absorbed_by_ = layer; }

  // Layers with several inputs (Add) override these four; the defaults pass
  // a one-input layer's single input through to the methods above. The
  // vectors are the model's, sized once: the step allocates nothing.
  virtual bool TakesInputs(int count) const { return count == 1; }
  virtual Shape SetupInputs(const std::vector<Shape>& in_samples) { return Setup(in_samples[0]); }
  virtual void ForwardInputs(const std::vector<Tensor>& in, const Tensor& out,
                             const ForwardContext& ctx) {
    Forward(in[0], out, ctx);
  }
  // d_in[k]'s view is empty when input k's gradient is not needed.
  virtual void BackwardInputs(const std::vector<Tensor>& in, const Tensor& out, const Tensor& d_out,
                              const std::vector<Tensor>& d_in) {
    Backward(in[0], out, d_out, d_in[0]);
  }
  // Whether Backward reads this layer's own output (ReLU6's clip mask): an
  // in-place layer after it then runs out of place, so as not to change it.
  // ReLU reads its output too but only its sign, which an in-place layer
  // after it (dropout, flatten) keeps where the gradient is not zero.
  virtual bool BackwardReadsOutput() const { return false; }
  // What Backward reads besides the output gradient, for the activation
  // plan (core/model/activation_plan.h): a value nothing's backward reads is
  // freed after its last forward reader. Conservative defaults.
  virtual bool BackwardNeedsInput() const { return true; }
  virtual bool BackwardNeedsOutput() const { return true; }
  // Whether Backward's result is sensitive to its input's low bits beyond
  // what it reads them for (batch norm subtracts the batch mean: for a
  // channel whose mean is large against its spread, the difference is all
  // that a 16-bit copy would lose), so the activation plan keeps the input
  // in floats whatever --activation-precision says.
  virtual bool BackwardNeedsExactInput() const { return false; }
  // Whether Forward may run again in training with ForwardContext::replay
  // and give bit-identical output and state, cheaply enough that its output
  // is worth recomputing rather than keeping (--recompute).
  virtual bool Replayable() const { return false; }
  // Whether Backward may write its input gradient over its output gradient
  // (on every backend that has its ops): the model then hands the output
  // gradient's buffer down, as for an in-place layer.
  virtual bool GradientInPlace() const { return false; }
  virtual void Reshape(int capacity) {}
  // Bytes of state this layer keeps besides its output between its Forward
  // and its Backward (masks, saved statistics) for batches of `capacity`
  // samples, for memory budgeting.
  virtual size_t StateBytes(int capacity) const { return 0; }
  // Scratch needed only while one Forward or Backward call runs (a conv's
  // im2col and packing space) for batches of up to `capacity` samples. The
  // model gives every layer on a backend one workspace, sized by the largest
  // need: layers run one at a time, so none needs its own.
  virtual size_t WorkspaceFloats(int capacity) const { return 0; }
  virtual void BindWorkspace(kernels::View workspace) {}
  // An in-place layer writes its output over its input and its input
  // gradient over its output gradient, which saves one activation buffer per
  // layer. Safe because no layer's backward pass reads its own output except
  // through what the in-place layer leaves there (ReLU's output is what the
  // next layer reads as input anyway). The model runs an in-place layer out
  // of place (output and input gradient in buffers of their own) when the
  // backend of its input lacks one of its ops, so a layer that declares ops
  // must work either way.
  virtual bool InPlace() const { return false; }

  virtual void Forward(const Tensor& in, const Tensor& out, const ForwardContext& ctx) = 0;
  // Overwrites this layer's gradients. d_in's view is empty when the input
  // gradient is not needed (first layer); the layer then skips computing it.
  virtual void Backward(const Tensor& in, const Tensor& out, const Tensor& d_out,
                        const Tensor& d_in) = 0;

 private:
  std::string name_;
  kernels::Backend* backend_ = nullptr;
  bool frozen_ = false;
  const Layer* absorbed_by_ = nullptr;
};

}  // namespace mt
