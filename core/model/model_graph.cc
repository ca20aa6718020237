// Model construction: how the layers connect, where each runs, which
// buffers the passes need. Everything here runs once, before any step.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/layers/size_limits.h"
#include "core/model/model.h"

namespace mt {
namespace {

// The loss on the training pass, the predictions on evaluation.
constexpr kernels::OpSet kLossOps{kernels::Op::kSoftmaxCrossEntropy, kernels::Op::kArgmaxRows};

void CheckInputShape(const Shape& input_sample) {
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
}

std::string LayerLabel(size_t i, const Layer& layer) {
  return "layer " + std::to_string(i + 1) + " (" + layer.name() + ")";
}

}  // namespace

void Model::ConnectInputs(std::vector<std::vector<int>> inputs) {
  const size_t n = layers_.size();
  if (!inputs.empty() && inputs.size() != n)
    throw std::invalid_argument("model: inputs listed for " + std::to_string(inputs.size()) +
                                " layers of " + std::to_string(n));
  inputs_ = std::move(inputs);
  inputs_.resize(n);
  input_values_.resize(n);
  consumers_.assign(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    Layer& layer = *layers_[i];
    if (layer.name().empty()) layer.set_name(std::string(layer.Type()) + std::to_string(i + 1));
    if (inputs_[i].empty()) inputs_[i].push_back(static_cast<int>(i) - 1);
    for (int from : inputs_[i]) {
      if (from < -1 || from >= static_cast<int>(i))
        throw std::invalid_argument(LayerLabel(i, layer) +
                                    ": reads a layer that does not come before it");
      input_values_[i].push_back(from + 1);
      ++consumers_[from + 1];
    }
    if (!layer.TakesInputs(static_cast<int>(inputs_[i].size())))
      throw std::invalid_argument(LayerLabel(i, layer) + ": a " + layer.Type() +
                                  " layer does not take " + std::to_string(inputs_[i].size()) +
                                  " inputs");
  }
  // A value nobody reads would be computed for nothing and get no gradient.
  for (size_t v = 1; v < n; ++v)
    if (consumers_[v] == 0)
      throw std::invalid_argument(LayerLabel(v - 1, *layers_[v - 1]) +
                                  ": its output is not read by any later layer (only the last "
                                  "layer's output leaves the model)");
}

void Model::PlaceAndShape(const Shape& input_sample) {
  CheckInputShape(input_sample);
  const size_t n = layers_.size();
  shapes_.assign(1, input_sample);
  in_place_.assign(n, 0);
  std::vector<Shape> in_shapes;
  for (size_t i = 0; i < n; ++i) {
    Layer& layer = *layers_[i];
    if (!placement_[i])
      throw std::invalid_argument("model: no backend for layer " + std::to_string(i + 1));
    const int first = input_values_[i][0];
    // An in-place layer writes over its input, so it runs where that lives.
    if (layer.InPlace() && input_values_[i].size() == 1 && i > 0)
      placement_[i] = &ValueBackend(first);
    placement_[i] = Supporting(placement_[i], layer.Ops(), i, layer.name());
    if (placement_[i] != &home_) mixed_ = true;
    layer.set_backend(placement_[i]);
    in_shapes.clear();
    for (int v : input_values_[i]) in_shapes.push_back(shapes_[v]);
    try {
      shapes_.push_back(layer.SetupInputs(in_shapes));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(LayerLabel(i, layer) + ": " + e.what());
    }
    // In place only over a value this layer alone reads, on its backend, and
    // whose producer's backward does not need it unchanged.
    in_place_[i] = layer.InPlace() && input_values_[i].size() == 1 && consumers_[first] == 1 &&
                   &ValueBackend(first) == placement_[i] &&
                   !(first > 0 && layers_[first - 1]->BackwardReadsOutput());
    param_offset_.push_back(param_count_);
    param_count_ += layer.ParamCount();
    stat_offset_.push_back(stat_count_);
    stat_count_ += layer.RunningStatCount();
  }
  if (output_shape().rank() != 1)
    throw std::invalid_argument("model: the last layer must give flat logits, got " +
                                output_shape().ToString());
  if (param_count_ > static_cast<size_t>(kMaxModelParams))
    throw std::invalid_argument("model: " + std::to_string(param_count_) +
                                " parameters, more than the 2^26 this build trains");
  for (const Shape& s : shapes_) max_activation_ = std::max(max_activation_, s.count());
  loss_backend_ = Supporting(placement_.back(), kLossOps, n, "loss");
}

int Model::BackendIndex(const kernels::Backend* b) const {
  for (size_t i = 0; i < backends_.size(); ++i)
    if (backends_[i].backend == b) return static_cast<int>(i);
  return -1;
}

// Simulates the backward pass once to give every value that needs a gradient
// a buffer: a value's buffer is taken when its first (highest) reader runs
// backward and given back once its producer has, so buffers are reused.
void Model::PlanGradients() {
  const size_t n = layers_.size();
  for (size_t i = 0; i <= n; ++i) {
    kernels::Backend* b = i < n ? placement_[i] : loss_backend_;
    if (BackendIndex(b) < 0) backends_.push_back(BackendBuffers{b, {}, {}, {}, {}});
  }
  // A value needs a gradient when the layer that made it trains or reads one
  // that does; the model's input never does.
  needs_grad_.assign(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    const Layer& layer = *layers_[i];
    bool needs = layer.ParamCount() > 0 && !layer.frozen();
    for (int v : input_values_[i]) needs = needs || needs_grad_[v];
    needs_grad_[i + 1] = needs;
  }
  // Each gradient buffer is a stretch of the backward pass in its backend's
  // arena (activation_plan.h), which shares the memory: taken when the
  // value's first (highest) reader runs backward (the loss, for the
  // logits), given back once its producer has, or handed down in place.
  grad_lives_.clear();
  auto take = [&](kernels::Backend* b, size_t floats, size_t when) {
    const int bi = BackendIndex(b);
    grad_lives_.push_back(ActivationGraph::Gradient{floats, bi, static_cast<int>(when), -1});
    return GradSlot{bi, static_cast<int>(grad_lives_.size()) - 1};
  };
  auto grow_scratch = [&](kernels::Backend* b, size_t k, size_t floats) {
    std::vector<size_t>& sizes = backends_[BackendIndex(b)].scratch_sizes;
    if (sizes.size() <= k) sizes.resize(k + 1, 0);
    sizes[k] = std::max(sizes[k], floats);
  };
  grad_slot_.assign(n + 1, GradSlot{});
  routes_.assign(n, {});
  if (needs_grad_[n])
    grad_slot_[n] = take(&ValueBackend(static_cast<int>(n)), shapes_[n].count(), n);
  for (size_t i = n; i-- > 0;) {
    const Layer& layer = *layers_[i];
    routes_[i].assign(input_values_[i].size(), GradRoute::kNone);
    if (!needs_grad_[i + 1]) continue;
    bool handed_down = false;  // d_out's buffer became the input's (in place)
    for (size_t k = 0; k < input_values_[i].size(); ++k) {
      const int v = input_values_[i][k];
      if (!needs_grad_[v]) continue;
      GradRoute& route = routes_[i][k];
      if (grad_slot_[v].backend >= 0) {
        route = GradRoute::kAccumulate;
      } else if (in_place_[i] || (layer.GradientInPlace() && input_values_[i].size() == 1 &&
                                  &ValueBackend(v) == placement_[i])) {
        route = GradRoute::kInPlace;
        grad_slot_[v] = grad_slot_[i + 1];
        size_t& size = grad_lives_[grad_slot_[v].index].floats;
        size = std::max(size, shapes_[v].count());
        handed_down = true;
      } else {
        route = &ValueBackend(v) == placement_[i] ? GradRoute::kDirect : GradRoute::kCopy;
        grad_slot_[v] = take(&ValueBackend(v), shapes_[v].count(), i);
      }
      // Contributions that do not land in place go through a scratch buffer
      // per input position on the layer's backend (and on the value's, to add
      // a gradient that crossed backends).
      if (route == GradRoute::kCopy || route == GradRoute::kAccumulate) {
        grow_scratch(placement_[i], k, shapes_[v].count());
        if (route == GradRoute::kAccumulate && &ValueBackend(v) != placement_[i])
          grow_scratch(&ValueBackend(v), k, shapes_[v].count());
      }
    }
    if (!handed_down) grad_lives_[grad_slot_[i + 1].index].to = static_cast<int>(i);
  }
  in_tensors_.resize(n);
  d_in_tensors_.resize(n);
  bridges_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    in_tensors_[i].resize(input_values_[i].size());
    d_in_tensors_[i].resize(input_values_[i].size());
    bridges_[i].resize(input_values_[i].size());
  }
}

void Model::PlanActivationMemory() {
  const size_t n = layers_.size();
  ActivationGraph graph;
  graph.recompute = recompute_;
  graph.half = precision_ != ActivationPrecision::kFp32;
  graph.gradients = grad_lives_;
  graph.arenas = static_cast<int>(backends_.size());
  for (const BackendBuffers& b : backends_) {
    const kernels::OpSet ops = b.backend->SupportedOps();
    graph.arena_packs.push_back(ops.Has(kernels::kPackHalves.op()) &&
                                ops.Has(kernels::kUnpackHalves.op()));
  }
  for (size_t v = 0; v <= n; ++v) {
    graph.floats.push_back(shapes_[v].count());
    graph.arena.push_back(BackendIndex(&ValueBackend(static_cast<int>(v))));
  }
  for (size_t i = 0; i < n; ++i) {
    const Layer& layer = *layers_[i];
    ActivationGraph::Step step;
    step.inputs = input_values_[i];
    step.in_place = in_place_[i];
    step.runs_backward = needs_grad_[i + 1];
    step.backward_needs_input = layer.BackwardNeedsInput();
    step.backward_needs_output = layer.BackwardNeedsOutput();
    step.exact_input = layer.BackwardNeedsExactInput();
    // A replay reads inputs from other backends through the bridges the
    // forward pass filled, which stay until the next forward.
    step.replayable = layer.Replayable();
    graph.steps.push_back(std::move(step));
  }
  act_plan_ = PlanActivations(graph);
  // Packing adds copies beside the floats; where the arenas come out no
  // smaller (a small model whose peak is its forward pass), keep floats.
  if (graph.half) {
    graph.half = false;
    ActivationPlan floats = PlanActivations(graph);
    size_t with = 0, without = 0;
    for (size_t f : act_plan_.arena_floats) with += f;
    for (size_t f : floats.arena_floats) without += f;
    if (without <= with) act_plan_ = std::move(floats);
  }
}

void Model::SetRecompute(bool on) {
  if (capacity_ > 0) throw std::logic_error("model: recomputation is chosen before Reserve");
  recompute_ = on;
  PlanActivationMemory();
}

void Model::SetActivationPrecision(ActivationPrecision precision) {
  if (capacity_ > 0)
    throw std::logic_error("model: the activation precision is chosen before Reserve");
  precision_ = precision;
  PlanActivationMemory();
}

size_t Model::ReplayedLayers() const {
  size_t count = 0;
  for (const std::vector<ReplayStep>& r : act_plan_.replays)
    for (const ReplayStep& step : r) count += step.kind == ReplayStep::Kind::kForward;
  return count;
}

Model::Kept Model::KeptOutput(size_t i) const {
  const size_t v = i + 1;
  if (act_plan_.dropped[v]) return Kept::kReplayed;
  if (act_plan_.packed[v]) return Kept::kHalves;
  return act_plan_.read_back[v] ? Kept::kFloats : Kept::kNothing;
}

size_t Model::PackedValues() const {
  size_t count = 0;
  for (const std::vector<int>& packs : act_plan_.packs) count += packs.size();
  return count;
}

void Model::BindParamsAndStats() {
  const size_t n = layers_.size();
  params_ = home_.Allocate(std::max<size_t>(param_count_, 1));
  grads_ = home_.Allocate(std::max<size_t>(param_count_, 1));
  // Layers that run no backward pass, and frozen ones, never write their
  // gradients: they stay zero.
  home_.Fill(grads(), 0.0f);
  // One mirror per run of consecutive parameterised layers on the same
  // foreign backend, so each pass moves a few contiguous ranges, not one per layer.
  for (size_t i = 0; i < n; ++i) {
    const size_t count = layers_[i]->ParamCount();
    if (count == 0 || placement_[i] == &home_) continue;
    if (!mirrors_.empty() && mirrors_.back().backend == placement_[i] &&
        mirrors_.back().end == param_offset_[i])
      mirrors_.back().end += count;
    else
      mirrors_.push_back(
          Mirror{placement_[i], param_offset_[i], param_offset_[i] + count, nullptr, nullptr});
  }
  size_t staging = 0;
  for (Mirror& m : mirrors_) {
    m.params = m.backend->Allocate(m.end - m.begin);
    m.grads = m.backend->Allocate(m.end - m.begin);
    m.backend->Fill(kernels::WholeOf(*m.grads), 0.0f);
    staging = std::max(staging, m.end - m.begin);
  }
  stat_buffers_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const size_t count = layers_[i]->RunningStatCount();
    staging = std::max(staging, count);
    if (count == 0) continue;
    stat_buffers_[i] = placement_[i]->Allocate(count);
    layers_[i]->BindRunningStats(kernels::WholeOf(*stat_buffers_[i]));
  }
  staging_.resize(staging);
  for (size_t i = 0; i < n; ++i) {
    const size_t count = layers_[i]->ParamCount(), at = param_offset_[i];
    kernels::View p = params().Slice(at, count), g = grads().Slice(at, count);
    for (const Mirror& m : mirrors_)
      if (m.backend == placement_[i] && at >= m.begin && at + count <= m.end && count > 0) {
        p = kernels::WholeOf(*m.params).Slice(at - m.begin, count);
        g = kernels::WholeOf(*m.grads).Slice(at - m.begin, count);
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

}  // namespace mt
