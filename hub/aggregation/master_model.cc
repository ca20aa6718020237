#include "hub/aggregation/master_model.h"

#include <algorithm>
#include <stdexcept>

#include "core/checkpoint/checkpoint.h"
#include "core/checkpoint/training_checkpoint.h"
#include "core/model/model_spec.h"
#include "core/profile/memory_breakdown.h"
#include "core/train/local_sgd.h"
#include "core/util/digest.h"
#include "proto/wire.h"

namespace mt {

MasterModel::MasterModel(const proto::ModelSpec& spec, const OptimizerConfig& optimizer,
                         int threads, uint64_t seed, int eval_batch,
                         const std::vector<std::string>& frozen)
    : backend_(threads), spec_text_(ModelSpecToText(spec)), frozen_(frozen) {
  model_ = BuildModel(spec, backend_, {}, frozen_);
  // Evaluation batches as large as asked, but within 256 MiB of
  // activations: a MobileNet takes megabytes per sample.
  const size_t per_sample = model_->MemoryBytesPerSample();
  const size_t fits = (size_t{256} << 20) / std::max<size_t>(per_sample, 1);
  model_->Reserve(static_cast<int>(std::clamp<size_t>(fits, 16, static_cast<size_t>(eval_batch))));
  model_->InitParams(seed);
  optimizer_ = MakeOptimizer(optimizer, backend_, model_->ParamCount());
  const auto trained = model_->TrainedRanges();
  if (!frozen_.empty()) optimizer_->set_trained_ranges(trained);
  // A worker recomputes when its budget would otherwise cut its batch
  // (worker/local_trainer.cc), so budgets are judged by that figure, as the
  // worker judges it (PredictTrainingMemory: model, optimizer, staging).
  const auto replaying = BuildModel(spec, backend_, {}, frozen_);
  // The workers' own choice, not sent at Join: judged at the default.
  replaying->SetActivationPrecision(kDefaultActivationPrecision);
  replaying->SetRecompute(true);
  const MemoryLine line = PredictMemoryLine(*replaying, optimizer_->slot_values());
  bytes_per_sample_ = static_cast<size_t>(line.per_sample);
  // Besides: a staging copy of weights and slots for resyncs.
  fixed_bytes_ = static_cast<size_t>(line.fixed) +
                 (model_->ParamCount() + optimizer_->slot_values()) * sizeof(float);
  segments_ = wire::GradientSegments(model_->ParamOffsets(), model_->ParamCount(),
                                     trained.empty() ? 0 : trained.front().first);
  codecs_ = MakeSegmentCodecs(segments_, model_->ParamMatrices());
  encoded_average_.resize(segments_.size());
  encoded_with_.assign(segments_.size(), Compression::kNone);
}

void MasterModel::EncodeSegment(size_t k, Compression encoding) {
  const wire::Segment seg = segments_[k];
  encoded_with_[k] = encoding;
  // Once, at the first lossy round: from then on it carries what is owed.
  if (encoding != Compression::kNone && broadcast_residual_.empty())
    broadcast_residual_.assign(model_->ParamCount(), 0.0f);
  if (encoding == Compression::kNone) {
    if (broadcast_residual_.empty()) return;
    float* avg = average() + seg.begin;
    float* owed = broadcast_residual_.data() + seg.begin;
    for (size_t i = 0; i < seg.size(); ++i) {
      if (owed[i] != 0.0f) avg[i] += owed[i];  // keeps -0 where nothing is owed
      owed[i] = 0.0f;
    }
    return;
  }
  std::string& bytes = encoded_average_[k];
  codecs_[k].Encode(encoding, average() + seg.begin, broadcast_residual_.data() + seg.begin,
                    &bytes);
  // The master copy takes the step the workers will take: from the bytes.
  const std::string why =
      codecs_[k].Decode(encoding, bytes.data(), bytes.size(), average() + seg.begin);
  if (!why.empty()) throw std::logic_error("hub cannot decode its own broadcast: " + why);
}

void MasterModel::ApplyAverage() { optimizer_->Step(model_->params(), model_->grads()); }

void MasterModel::ApplyAverageChange() {
  local_sgd::AddChange(kernels::CpuBackend::Data(model_->params()), average(),
                       model_->ParamCount());
}

bool MasterModel::ApplyOuterOptimizer(size_t k, float lr, float m) {
  const wire::Segment seg = segments_[k];
  const size_t n = model_->ParamCount();
  if (m != 0 && outer_velocity_.size() != n) outer_velocity_.assign(n, 0.0f);
  return local_sgd::OuterStep(average() + seg.begin,
                              m == 0 ? nullptr : outer_velocity_.data() + seg.begin, seg.size(), lr,
                              m);
}

uint64_t MasterModel::Digest() const {
  return DigestFloats(kernels::CpuBackend::Data(model_->params()), model_->ParamCount());
}

std::vector<float> MasterModel::Weights() const {
  std::vector<float> w(model_->ParamCount());
  model_->GetParams(w.data());
  return w;
}

std::vector<float> MasterModel::FullState(OptimizerState* state) const {
  *state = optimizer_->SaveState();
  // Slots are zero until the first step: then they need not travel.
  if (state->steps == 0) state->slots.clear();
  const size_t p = model_->ParamCount();
  std::vector<float> all(p + state->slots.size());
  model_->GetParams(all.data());
  std::copy(state->slots.begin(), state->slots.end(), all.begin() + static_cast<std::ptrdiff_t>(p));
  state->slots.clear();
  return all;
}

void MasterModel::Restore(const Checkpoint& ck, const std::string& origin) {
  if (ck.model_spec != spec_text_)
    throw std::runtime_error("checkpoint " + origin + " is for a different model");
  if (ck.weights.size() != model_->ParamCount())
    throw std::runtime_error("checkpoint " + origin + ": weight count does not match the model");
  model_->SetParams(ck.weights.data());
  // A checkpoint from before running statistics travelled keeps the start's.
  if (ck.running_stats.size() == model_->RunningStatCount())
    model_->SetRunningStats(ck.running_stats.data());
  optimizer_->LoadState(ck.optimizer);
}

std::string MasterModel::SaveCheckpoint(const std::string& dir, int64_t step, int64_t epoch,
                                        uint64_t seed, int64_t global_batch) const {
  return SaveTrainingCheckpoint(dir, spec_text_, *model_, *optimizer_,
                                RunPosition{step, epoch, seed, global_batch});
}

}  // namespace mt
