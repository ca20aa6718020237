// A network as a graph of layers: owns the layers, one contiguous parameter
// buffer, one contiguous gradient buffer, the running statistics, the
// activations and the gradient buffers, all sized once for a batch capacity.
// The step (SetBatch, ComputeGradients) allocates nothing.
//
// Graph: layer i reads the outputs of earlier layers (or the model's input),
// listed by index; by default the previous layer's. The last layer's output
// is the logits. The listed order is the order the forward pass runs in and
// the backward pass runs in reverse. A value read by several layers gets the
// sum of their input gradients; a gradient buffer holds its place in the
// activation arena from the first backward step that writes it until the
// layer that produced its value has run backward, so it reuses what the
// forward pass's values have left. A layer whose output leads to nothing that
// trains (frozen layers below the trained head) runs no backward pass.
//
// Activations: one arena per backend, laid out once by the activation plan
// (activation_plan.h): a value keeps its place only while a forward reader
// or a backward step still needs it. With recomputation (SetRecompute) the
// outputs of cheap replayable layers are not kept for the backward pass but
// replayed just before it needs them; gradients are bit-identical either way.
// Batch norm's input gradient overwrites its output gradient.
//
// Placement: each layer runs on the backend chosen for it; the parameters,
// gradients and optimizer live on the model's home backend. A layer placed
// elsewhere works on a mirror of its parameters on its own backend; the
// model uploads mirrors before each pass and gathers mirrored gradients into
// the home buffer after each backward pass, and copies an activation (or its
// gradient) wherever a layer reads a value made on another backend. Every such
// copy is explicit and happens here, never inside a backend. In-place layers
// (ReLU, Dropout, Flatten) run where their input lives, and in place when
// they are its only reader.
//
// A layer never runs on a backend that lacks one of its ops (Layer::Ops):
// it runs on the home backend instead, out of place if it is an in-place
// layer, and the loss likewise when the last layer's backend lacks it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/layers/layer.h"
#include "core/model/activation_plan.h"
#include "core/model/activation_precision.h"
#include "kernels/backend.h"

namespace mt {

// Wall-clock seconds spent per layer in one profiled pass (each backend is
// synchronised around each layer, so the figures are real, not queued), and
// when each layer began, for timelines (core/trace/). Reused across passes:
// a profiled pass allocates only the first time.
struct LayerTimes {
  using Clock = std::chrono::steady_clock;
  std::vector<double> forward, backward;  // per layer; backward 0 where none ran
  std::vector<Clock::time_point> forward_begin, backward_begin;  // per layer
  Clock::time_point loss_begin;
  double loss = 0;      // softmax cross-entropy
  double transfer = 0;  // copies between backends
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
  // `inputs` lists per layer the layers it reads (-1: the model's input); an
  // empty list, or no lists at all, means the previous layer.
  Model(Shape input_sample, std::vector<std::unique_ptr<Layer>> layers, kernels::Backend& home,
        std::vector<kernels::Backend*> placement = {}, std::vector<std::vector<int>> inputs = {});

  const Shape& input_shape() const { return shapes_.front(); }
  const Shape& output_shape() const { return shapes_.back(); }
  int num_classes() const { return output_shape()[0]; }
  size_t ParamCount() const { return param_count_; }
  // Where each layer's parameters begin in params() and grads(), ascending.
  const std::vector<size_t>& ParamOffsets() const { return param_offset_; }
  // The layers' parameter matrices (Layer::ParamMatrices) at their offsets
  // in params(), ascending.
  std::vector<ParamMatrix> ParamMatrices() const;
  // Where parameters, gradients and the optimizer live.
  kernels::Backend& backend() const { return home_; }
  const std::vector<std::unique_ptr<Layer>>& layers() const { return layers_; }
  // The backend each layer runs on (in-place layers resolved to their input's,
  // layers whose backend lacks their ops moved to home).
  const std::vector<kernels::Backend*>& placement() const { return placement_; }
  // Layer i's output shape per sample, and the layers it reads (-1: the input).
  const Shape& layer_output_shape(size_t i) const { return shapes_[i + 1]; }
  const std::vector<int>& layer_inputs(size_t i) const { return inputs_[i]; }
  // The [begin, end) ranges of parameters that train (layers not frozen),
  // ascending and merged: what the optimizer updates.
  std::vector<std::pair<size_t, size_t>> TrainedRanges() const;
  // Whether layer i runs a backward pass: it trains, or something below it does.
  bool RunsBackward(size_t i) const { return needs_grad_[i + 1]; }
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

  // Running statistics (batch norm): per layer in order, RunningStatCount()
  // floats in all; each layer's live on the backend it runs on.
  size_t RunningStatCount() const { return stat_count_; }
  const std::vector<size_t>& RunningStatOffsets() const { return stat_offset_; }
  void GetRunningStats(float* host) const;
  void SetRunningStats(const float* host);

  // Recomputation: keep fewer activations and replay cheap layers in the
  // backward pass instead (more time, less memory). Only before Reserve.
  void SetRecompute(bool on);
  bool recompute() const { return recompute_; }
  // Layer forwards replayed per training step (0 without recomputation).
  size_t ReplayedLayers() const;
  // How the values the backward pass reads are kept between the passes
  // (activation_precision.h, activation_plan.h): in floats, or packed into
  // 16 bits and widened when read, on backends with the pack ops. Only
  // before Reserve.
  void SetActivationPrecision(ActivationPrecision precision);
  ActivationPrecision activation_precision() const { return precision_; }
  // Values kept in 16 bits per training step.
  size_t PackedValues() const;
  // What the plan keeps of layer i's output between the forward and the
  // backward pass (for mtmodel profile): nothing (no backward step reads
  // it), floats, 16 bits, or nothing but replayed; and whether it is
  // written in place over its input (then the input's row says).
  enum class Kept { kNothing, kFloats, kHalves, kReplayed };
  Kept KeptOutput(size_t i) const;
  bool OutputInPlace(size_t i) const { return act_plan_.group[i + 1] != static_cast<int>(i) + 1; }

  // Makes room for batches of up to `capacity` samples (never shrinks).
  void Reserve(int capacity);
  int capacity() const { return capacity_; }
  // Device memory for parameters, gradients, activations, layer state and
  // the shared workspaces at a batch capacity: what Reserve(capacity)
  // allocates, to the byte. The workspaces grow with small batches and then
  // stop (a conv's is per thread), so MemoryBytes(2) - MemoryBytes(1) is not
  // the per-sample figure: MemoryBytesPerSample() is.
  size_t MemoryBytes(int capacity) const;
  // What grows with every sample (activations, their gradients, copies,
  // labels), exactly linear: MemoryBytes(c) = fixed(c) + c * this, where
  // fixed(c) only grows up to its bound.
  size_t MemoryBytesPerSample() const;
  // The workspaces shared by the layers on each backend (the largest any of
  // them needs, Layer::WorkspaceFloats), in bytes at a batch capacity.
  size_t WorkspaceBytes(int capacity) const;

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
  // Forward in training mode with no backward pass: batch norm's running
  // statistics move toward the current batch's (recalibration).
  void UpdateRunningStats(uint64_t seed) {
    ForwardAndLoss(ForwardContext{true, seed}, nullptr, false);
  }
  // The logits of the last pass ([batch][classes] floats) to host memory.
  void GetLogits(float* host) const;

 private:
  // A contiguous range of parameters [begin, end) mirrored on another backend.
  struct Mirror {
    kernels::Backend* backend;
    size_t begin, end;
    std::unique_ptr<kernels::Buffer> params, grads;
  };

  // How the backward pass hands layer i's gradient for input k to the
  // value it read.
  enum class GradRoute : uint8_t {
    kNone,        // not needed: nothing below trains
    kDirect,      // written straight into the value's gradient buffer
    kInPlace,     // the layer ran in place: the gradient stays where d_out was
    kCopy,        // first contribution, from another backend
    kAccumulate,  // a later contribution: added to what is there
  };
  // A gradient buffer: which backend's arena, which of grad_lives_.
  struct GradSlot {
    int backend = -1;
    int index = -1;
  };
  struct BackendBuffers {
    kernels::Backend* backend;
    std::vector<std::unique_ptr<kernels::Buffer>> scratch;  // per input position
    // The plan's arena: activations and their gradients.
    std::unique_ptr<kernels::Buffer> activations;
    std::unique_ptr<kernels::Buffer> workspace;  // shared by its layers
    // Floats per sample of each scratch buffer (its index is the input
    // position it serves; 0: unused).
    std::vector<size_t> scratch_sizes;
  };

  // Values: 0 is the model's input, v > 0 is layer v - 1's output.
  // Per backend: the floats of the largest workspace its layers need.
  std::vector<size_t> WorkspaceNeeds(int capacity) const;
  kernels::Backend& ValueBackend(int v) const { return *placement_[v == 0 ? 0 : v - 1]; }
  Tensor Activation(int v, int n) const;
  // Layer i's input k (a bridge when the value lives on another backend).
  Tensor LayerInput(size_t i, size_t k, int n) const;
  Tensor LossInput(int n) const;
  kernels::View GradView(int v, int n) const;
  int BackendIndex(const kernels::Backend* b) const;
  // `wanted` when it has every op of `ops`, else home (recorded in fallbacks_).
  kernels::Backend* Supporting(kernels::Backend* wanted, kernels::OpSet ops, size_t step,
                               const std::string& name);
  // Construction, in order (model_graph.cc).
  void ConnectInputs(std::vector<std::vector<int>> inputs);
  void PlaceAndShape(const Shape& input_sample);
  void PlanGradients();
  void PlanActivationMemory();
  void BindParamsAndStats();
  // Copies layer i's inputs made on other backends onto its backend.
  void BridgeIn(size_t i, LayerTimes* times);
  // `keep`: a backward pass follows, so the plan's values are packed.
  double ForwardAndLoss(const ForwardContext& ctx, LayerTimes* times, bool keep);
  // Value v's 16-bit copy (a packed value's) for a batch of n.
  kernels::View PackedView(int v, int n) const;
  // Runs again the forwards the plan replays before layer i's backward, and
  // widens the packed values it reads.
  void Replay(size_t i, uint64_t seed, LayerTimes* times);
  // Routes layer i's input gradients to their values after its Backward.
  void RouteInputGrads(size_t i);
  void UploadMirrors();
  void GatherMirroredGrads();
  // Copies src (on `from`) to dst (on `to`) through host staging.
  void Transfer(kernels::Backend& from, kernels::View src, kernels::Backend& to, kernels::View dst);

  kernels::Backend& home_;
  std::vector<std::unique_ptr<Layer>> layers_;
  std::vector<kernels::Backend*> placement_;  // per layer
  kernels::Backend* loss_backend_ = nullptr;
  std::vector<PlacementFallback> fallbacks_;
  std::vector<std::vector<int>> inputs_;               // per layer: layer indices, -1 the input
  std::vector<std::vector<int>> input_values_;         // the same as value ids
  std::vector<int> consumers_;                         // per value: how many inputs read it
  std::vector<Shape> shapes_;                          // per value, per sample
  std::vector<char> in_place_;                         // per layer
  std::vector<char> needs_grad_;                       // per value
  std::vector<GradSlot> grad_slot_;                    // per value
  std::vector<ActivationGraph::Gradient> grad_lives_;  // per gradient buffer: its stretch
  std::vector<std::vector<GradRoute>> routes_;         // per layer, per input
  std::vector<size_t> param_offset_;                   // per layer
  std::vector<size_t> stat_offset_;                    // per layer
  ActivationPlan act_plan_;
  // bridges_[i][k]: layer i's input k copied onto its backend (null when the
  // value lives there already); loss_bridge_ likewise for the logits.
  std::vector<std::vector<std::unique_ptr<kernels::Buffer>>> bridges_;
  std::unique_ptr<kernels::Buffer> loss_bridge_, loss_grad_;
  std::vector<BackendBuffers> backends_;  // every backend a step runs on
  // The tensors each layer is called with, sized once.
  std::vector<std::vector<Tensor>> in_tensors_, d_in_tensors_;
  std::vector<std::unique_ptr<kernels::Buffer>> stat_buffers_;  // per layer, may be null
  std::vector<Mirror> mirrors_;
  std::unique_ptr<kernels::Buffer> labels_, predictions_;
  std::unique_ptr<kernels::Buffer> params_, grads_;
  std::vector<float> staging_;  // host side of every cross-backend copy
  size_t param_count_ = 0;
  size_t stat_count_ = 0;
  size_t max_activation_ = 0;  // largest per-sample activation count
  int capacity_ = 0;
  int batch_ = 0;
  bool mixed_ = false;
  bool recompute_ = false;
  ActivationPrecision precision_ = ActivationPrecision::kFp32;
  bool replaying_ = false;  // in the backward pass: dropped values are at their replay places
};

}  // namespace mt
