#include "core/model/model.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

#include "core/layers/size_limits.h"
#include "core/model/fusion.h"
#include "core/util/rng.h"
#include "kernels/dropout_hash.h"

namespace mt {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

Model::Model(Shape input_sample, std::vector<std::unique_ptr<Layer>> layers, kernels::Backend& home,
             std::vector<kernels::Backend*> placement, std::vector<std::vector<int>> inputs)
    : home_(home), layers_(std::move(layers)), placement_(std::move(placement)) {
  if (layers_.empty()) throw std::invalid_argument("model: no layers");
  if (placement_.empty()) placement_.assign(layers_.size(), &home_);
  if (placement_.size() != layers_.size())
    throw std::invalid_argument("model: placement names " + std::to_string(placement_.size()) +
                                " backends for " + std::to_string(layers_.size()) + " layers");
  ConnectInputs(std::move(inputs));
  PlaceAndShape(input_sample);
  FuseBatchNormActivations(layers_, inputs_, in_place_);
  PlanGradients();
  PlanActivationMemory();
  BindParamsAndStats();
}

std::string Model::PlacementSummary() const {
  std::string s;
  auto fallback = fallbacks_.begin();
  for (size_t i = 0; i <= layers_.size(); ++i) {
    const bool moved = fallback != fallbacks_.end() && fallback->step == i;
    if (i == layers_.size() && !moved) break;
    if (i) s += ",";
    s += i < layers_.size() ? layers_[i]->name() + ":" + placement_[i]->Name()
                            : "loss:" + loss_backend_->Name();
    if (moved) {
      s += "(" + fallback->wanted + " lacks " + fallback->missing.Names("+") + ")";
      ++fallback;
    }
  }
  return s;
}

void Model::InitParams(uint64_t seed) {
  std::vector<float> host(param_count_);
  for (size_t i = 0; i < layers_.size(); ++i) {
    // One stream per layer, so adding a layer does not change the others.
    Rng rng(kernels::MixBits(seed) ^ kernels::MixBits(i + 1));
    layers_[i]->InitParams(rng, host.data() + param_offset_[i]);
  }
  SetParams(host.data());
  std::vector<float> stats(stat_count_);
  for (size_t i = 0; i < layers_.size(); ++i)
    layers_[i]->InitRunningStats(stats.data() + stat_offset_[i]);
  SetRunningStats(stats.data());
}

void Model::GetParams(float* host) const { home_.Download(params().Slice(0, param_count_), host); }
void Model::SetParams(const float* host) { home_.Upload(host, params().Slice(0, param_count_)); }
void Model::GetGrads(float* host) const { home_.Download(grads().Slice(0, param_count_), host); }

std::vector<ParamMatrix> Model::ParamMatrices() const {
  std::vector<ParamMatrix> out;
  for (size_t i = 0; i < layers_.size(); ++i)
    for (ParamMatrix m : layers_[i]->ParamMatrices()) {
      m.begin += param_offset_[i];
      out.push_back(m);
    }
  return out;
}

std::vector<std::pair<size_t, size_t>> Model::TrainedRanges() const {
  std::vector<std::pair<size_t, size_t>> ranges;
  for (size_t i = 0; i < layers_.size(); ++i) {
    const size_t count = layers_[i]->ParamCount(), at = param_offset_[i];
    if (count == 0 || layers_[i]->frozen()) continue;
    if (!ranges.empty() && ranges.back().second == at)
      ranges.back().second += count;
    else
      ranges.emplace_back(at, at + count);
  }
  return ranges;
}

void Model::GetRunningStats(float* host) const {
  for (size_t i = 0; i < layers_.size(); ++i)
    if (stat_buffers_[i])
      placement_[i]->Download(kernels::WholeOf(*stat_buffers_[i]), host + stat_offset_[i]);
}

void Model::SetRunningStats(const float* host) {
  for (size_t i = 0; i < layers_.size(); ++i)
    if (stat_buffers_[i])
      placement_[i]->Upload(host + stat_offset_[i], kernels::WholeOf(*stat_buffers_[i]));
}

void Model::Reserve(int capacity) {
  if (capacity <= capacity_) return;
  const size_t n = layers_.size();
  for (size_t b = 0; b < backends_.size(); ++b)
    backends_[b].activations =
        backends_[b].backend->Allocate(std::max<size_t>(act_plan_.arena_floats[b] * capacity, 1));
  // Forward carries activations across, backward their gradients.
  size_t staging = std::max(staging_.size(), Mixed() ? max_activation_ * capacity : size_t{0});
  for (size_t i = 0; i < n; ++i)
    for (size_t k = 0; k < input_values_[i].size(); ++k) {
      const int v = input_values_[i][k];
      if (&ValueBackend(v) == placement_[i]) continue;
      bridges_[i][k] = placement_[i]->Allocate(shapes_[v].count() * capacity);
      staging = std::max(staging, shapes_[v].count() * capacity);
    }
  const size_t logits = shapes_[n].count() * capacity;
  if (&ValueBackend(static_cast<int>(n)) != loss_backend_) {
    loss_bridge_ = loss_backend_->Allocate(logits);
    staging = std::max(staging, logits);
  }
  // The loss writes its gradient here when it cannot write it where the
  // logits' gradient lives (another backend, or none: nothing trains).
  if (loss_bridge_ || !needs_grad_[n]) loss_grad_ = loss_backend_->Allocate(logits);
  staging_.resize(staging);
  for (BackendBuffers& b : backends_) {
    b.scratch.resize(b.scratch_sizes.size());
    for (size_t j = 0; j < b.scratch.size(); ++j)  // none where no input position needs one
      if (b.scratch_sizes[j] > 0) b.scratch[j] = b.backend->Allocate(b.scratch_sizes[j] * capacity);
  }
  labels_ = loss_backend_->Allocate(capacity);
  predictions_ = loss_backend_->Allocate(capacity);
  const std::vector<size_t> workspaces = WorkspaceNeeds(capacity);
  for (size_t b = 0; b < backends_.size(); ++b)
    if (workspaces[b] > 0) backends_[b].workspace = backends_[b].backend->Allocate(workspaces[b]);
  for (size_t i = 0; i < n; ++i) {
    layers_[i]->Reshape(capacity);
    const BackendBuffers& b = backends_[BackendIndex(placement_[i])];
    if (b.workspace) layers_[i]->BindWorkspace(kernels::WholeOf(*b.workspace));
  }
  capacity_ = capacity;
}

std::vector<size_t> Model::WorkspaceNeeds(int capacity) const {
  std::vector<size_t> floats(backends_.size(), 0);
  for (size_t i = 0; i < layers_.size(); ++i) {
    size_t& most = floats[BackendIndex(placement_[i])];
    most = std::max(most, layers_[i]->WorkspaceFloats(capacity));
  }
  return floats;
}

size_t Model::WorkspaceBytes(int capacity) const {
  size_t floats = 0;
  for (size_t f : WorkspaceNeeds(capacity)) floats += f;
  return floats * sizeof(float);
}

size_t Model::MemoryBytesPerSample() const {
  const size_t n = layers_.size();
  size_t per_sample = 2;  // labels, predictions
  for (size_t floats : act_plan_.arena_floats) per_sample += floats;
  for (size_t i = 0; i < n; ++i)
    for (int v : input_values_[i])
      if (&ValueBackend(v) != placement_[i]) per_sample += shapes_[v].count();
  if (&ValueBackend(static_cast<int>(n)) != loss_backend_) per_sample += shapes_[n].count();
  if (&ValueBackend(static_cast<int>(n)) != loss_backend_ || !needs_grad_[n])
    per_sample += shapes_[n].count();
  for (const BackendBuffers& b : backends_)
    for (size_t floats : b.scratch_sizes) per_sample += floats;
  size_t state = 0;  // masks and argmax grow by the sample; batch norm's saved statistics do not
  for (const auto& layer : layers_) state += layer->StateBytes(2) - layer->StateBytes(1);
  return per_sample * sizeof(float) + state;
}

size_t Model::MemoryBytes(int capacity) const {
  size_t fixed = 2 * param_count_ + stat_count_;
  for (const Mirror& m : mirrors_) fixed += 2 * (m.end - m.begin);
  size_t bytes = fixed * sizeof(float) + MemoryBytesPerSample() * capacity;
  for (const auto& layer : layers_) bytes += layer->StateBytes(1) * 2 - layer->StateBytes(2);
  return bytes + WorkspaceBytes(capacity);
}

Tensor Model::Activation(int v, int n) const {
  const Shape s = shapes_[v].WithBatch(n);
  const bool replayed = replaying_ && (act_plan_.dropped[v] || act_plan_.packed[v]);
  const size_t at = (replayed ? act_plan_.replay_at[v] : act_plan_.forward_at[v]) * capacity_;
  const BackendBuffers& arena = backends_[BackendIndex(&ValueBackend(v))];
  return Tensor{s, kernels::View{arena.activations.get(), at, s.count()}};
}

kernels::View Model::PackedView(int v, int n) const {
  const BackendBuffers& arena = backends_[BackendIndex(&ValueBackend(v))];
  return kernels::View{arena.activations.get(), act_plan_.packed_at[v] * capacity_,
                       kernels::HalfElements(shapes_[v].count() * static_cast<size_t>(n))};
}

Tensor Model::LayerInput(size_t i, size_t k, int n) const {
  const int v = input_values_[i][k];
  if (!bridges_[i][k]) return Activation(v, n);
  const Shape s = shapes_[v].WithBatch(n);
  return Tensor{s, kernels::View{bridges_[i][k].get(), 0, s.count()}};
}

Tensor Model::LossInput(int n) const {
  const int v = static_cast<int>(layers_.size());
  if (!loss_bridge_) return Activation(v, n);
  const Shape s = shapes_[v].WithBatch(n);
  return Tensor{s, kernels::View{loss_bridge_.get(), 0, s.count()}};
}

kernels::View Model::GradView(int v, int n) const {
  const GradSlot& slot = grad_slot_[v];
  return kernels::View{backends_[slot.backend].activations.get(),
                       act_plan_.gradient_at[slot.index] * capacity_,
                       shapes_[v].count() * static_cast<size_t>(n)};
}

void Model::Transfer(kernels::Backend& from, kernels::View src, kernels::Backend& to,
                     kernels::View dst) {
  from.Download(src, staging_.data());
  to.Upload(staging_.data(), dst);
}

void Model::BridgeIn(size_t i, LayerTimes* times) {
  const Clock::time_point t = times ? Clock::now() : Clock::time_point{};
  bool moved = false;
  for (size_t k = 0; k < bridges_[i].size(); ++k) {
    if (!bridges_[i][k]) continue;
    const int v = input_values_[i][k];
    Transfer(ValueBackend(v), Activation(v, batch_).view, *placement_[i],
             LayerInput(i, k, batch_).view);
    moved = true;
  }
  if (times && moved) times->transfer += Since(t);
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
  ValueBackend(0).Upload(images, Activation(0, n).view);
  loss_backend_->Upload(labels, kernels::View{labels_.get(), 0, static_cast<size_t>(n)});
}

double Model::ForwardAndLoss(const ForwardContext& ctx, LayerTimes* times, bool keep) {
  Clock::time_point t;
  if (times) t = Clock::now();
  replaying_ = false;
  UploadMirrors();
  if (times) times->transfer += Since(t);
  for (size_t i = 0; i < layers_.size(); ++i) {
    BridgeIn(i, times);
    if (times) {
      placement_[i]->Synchronize();
      t = Clock::now();
      times->forward_begin[i] = t;
    }
    ForwardContext layer_ctx = ctx;
    layer_ctx.seed = kernels::MixBits(ctx.seed) ^ kernels::MixBits(i + 1);
    for (size_t k = 0; k < in_tensors_[i].size(); ++k) in_tensors_[i][k] = LayerInput(i, k, batch_);
    layers_[i]->ForwardInputs(in_tensors_[i], Activation(static_cast<int>(i) + 1, batch_),
                              layer_ctx);
    if (keep)  // what the backward pass reads of the values no forward reads any more
      for (int g : act_plan_.packs[i])
        kernels::kPackHalves(ValueBackend(g), Activation(g, batch_).view, PackedView(g, batch_),
                             HalfFormatOf(precision_));
    if (times) {
      placement_[i]->Synchronize();
      times->forward[i] = Since(t);
    }
  }
  const int last = static_cast<int>(layers_.size());
  if (times) {
    t = Clock::now();
    times->loss_begin = t;
  }
  if (loss_bridge_)
    Transfer(ValueBackend(last), Activation(last, batch_).view, *loss_backend_,
             LossInput(batch_).view);
  const Tensor logits = LossInput(batch_);
  // The gradient of the logits goes straight to the last value's buffer when
  // the loss runs where that lives (no gradient needed: nothing trains).
  const kernels::View d_logits =
      loss_grad_ ? kernels::View{loss_grad_.get(), 0, logits.count()} : GradView(last, batch_);
  const double loss = loss_backend_->SoftmaxCrossEntropy(
      logits.view, kernels::View{labels_.get(), 0, static_cast<size_t>(batch_)}, batch_,
      num_classes(), d_logits);
  if (loss_grad_ && needs_grad_[last])
    Transfer(*loss_backend_, d_logits, ValueBackend(last), GradView(last, batch_));
  if (times) times->loss = Since(t);
  return loss;
}

void Model::Replay(size_t i, uint64_t seed, LayerTimes* times) {
  for (const ReplayStep& step : act_plan_.replays[i]) {
    const int j = step.kind == ReplayStep::Kind::kForward ? step.index : step.index - 1;
    Clock::time_point t;
    if (times) {
      placement_[j]->Synchronize();
      t = Clock::now();
    }
    if (step.kind == ReplayStep::Kind::kWiden) {  // counts as forward time of its producer
      kernels::kUnpackHalves(ValueBackend(step.index), PackedView(step.index, batch_),
                             Activation(step.index, batch_).view, HalfFormatOf(precision_));
      if (times) {
        placement_[j]->Synchronize();
        times->forward[j] += Since(t);
      }
      continue;
    }
    ForwardContext ctx{true, kernels::MixBits(seed) ^ kernels::MixBits(j + 1), true};
    for (size_t k = 0; k < in_tensors_[j].size(); ++k) in_tensors_[j][k] = LayerInput(j, k, batch_);
    layers_[j]->ForwardInputs(in_tensors_[j], Activation(j + 1, batch_), ctx);
    if (times) {  // a replay counts as forward time of the layer replayed
      placement_[j]->Synchronize();
      times->forward[j] += Since(t);
    }
  }
}

void Model::RouteInputGrads(size_t i) {
  for (size_t k = 0; k < routes_[i].size(); ++k) {
    const int v = input_values_[i][k];
    kernels::Backend& mine = *placement_[i];
    kernels::Backend& theirs = ValueBackend(v);
    const kernels::View d_in = d_in_tensors_[i][k].view;
    switch (routes_[i][k]) {
      case GradRoute::kNone:
      case GradRoute::kDirect:
      case GradRoute::kInPlace: break;
      case GradRoute::kCopy: Transfer(mine, d_in, theirs, GradView(v, batch_)); break;
      case GradRoute::kAccumulate:
        if (&mine == &theirs) {
          mine.Axpy(1.0f, d_in, GradView(v, batch_));
        } else {
          BackendBuffers& there = backends_[grad_slot_[v].backend];
          const kernels::View landed{there.scratch[k].get(), 0, d_in.count};
          Transfer(mine, d_in, theirs, landed);
          theirs.Axpy(1.0f, landed, GradView(v, batch_));
        }
        break;
    }
  }
}

double Model::ComputeGradients(uint64_t seed, LayerTimes* times, GradientListener* listener) {
  if (times) {
    const size_t n = layers_.size();
    times->forward.assign(n, 0.0);  // assign keeps the capacity: no allocation after the first
    times->backward.assign(n, 0.0);
    times->forward_begin.assign(n, Clock::time_point{});
    times->backward_begin.assign(n, Clock::time_point{});
    times->loss = times->transfer = 0;
  }
  const double loss = ForwardAndLoss(ForwardContext{true, seed}, times, true);
  replaying_ = true;
  Clock::time_point t;
  for (size_t i = layers_.size(); i-- > 0;) {
    Layer& layer = *layers_[i];
    if (needs_grad_[i + 1]) {
      Replay(i, seed, times);
      kernels::Backend& on = *placement_[i];
      BackendBuffers& here = backends_[BackendIndex(&on)];
      for (size_t k = 0; k < routes_[i].size(); ++k) {
        const int v = input_values_[i][k];
        const Shape s = shapes_[v].WithBatch(batch_);
        kernels::View view;
        switch (routes_[i][k]) {
          case GradRoute::kNone: break;
          case GradRoute::kDirect:
          case GradRoute::kInPlace: view = GradView(v, batch_); break;
          case GradRoute::kCopy:
          case GradRoute::kAccumulate:
            view = kernels::View{here.scratch[k].get(), 0, s.count()};
            break;
        }
        d_in_tensors_[i][k] = Tensor{s, view};
      }
      if (times) {
        on.Synchronize();
        t = Clock::now();
        times->backward_begin[i] = t;
      }
      const int out = static_cast<int>(i) + 1;
      const Tensor d_out{shapes_[out].WithBatch(batch_), GradView(out, batch_)};
      for (size_t k = 0; k < in_tensors_[i].size(); ++k)
        in_tensors_[i][k] = LayerInput(i, k, batch_);
      layer.BackwardInputs(in_tensors_[i], Activation(out, batch_), d_out, d_in_tensors_[i]);
      if (times) {
        on.Synchronize();
        times->backward[i] = Since(t);
        t = Clock::now();
      }
      RouteInputGrads(i);
      if (times) times->transfer += Since(t);
    }
    // With every layer on the home backend, a layer's weight gradient is
    // final once its Backward has run there (or, running none, it is zero).
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
  const double loss = ForwardAndLoss(ForwardContext{false, 0}, nullptr, false);
  if (predictions) {
    const Tensor logits = LossInput(batch_);
    kernels::View out{predictions_.get(), 0, static_cast<size_t>(batch_)};
    loss_backend_->ArgmaxRows(logits.view, batch_, num_classes(), out);
    loss_backend_->Download(out, predictions);
  }
  return loss;
}

void Model::GetLogits(float* host) const { loss_backend_->Download(LossInput(batch_).view, host); }

}  // namespace mt
