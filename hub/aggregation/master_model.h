// The hub's master copy of the model: weights, optimizer state and the
// averaged gradient of the last step, which it applies exactly as the
// workers will (after the same encoding, so both stay bit-identical).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/compress/gradient_codec.h"
#include "core/compress/segment_codec.h"
#include "core/model/model.h"
#include "core/optim/optimizer.h"
#include "kernels/cpu/cpu_backend.h"
#include "model.pb.h"
#include "proto/wire.h"

namespace mt {

struct Checkpoint;

class MasterModel {
 public:
  // Builds the model with initial weights from `seed`, reserved for
  // evaluation batches of `eval_batch`.
  // `frozen` names layers that keep their weights: the optimizer leaves them
  // and the segments start at the lowest trained layer's parameters.
  MasterModel(const proto::ModelSpec& spec, const OptimizerConfig& optimizer, int threads,
              uint64_t seed, int eval_batch, const std::vector<std::string>& frozen = {});

  size_t param_count() const { return model_->ParamCount(); }
  Model& model() { return *model_; }
  const Optimizer& optimizer() const { return *optimizer_; }
  // Before the first step (Hub::FollowDevices): workers take it with the
  // full state they start from.
  void set_lr(float lr) { optimizer_->set_lr(lr); }
  const std::string& spec_text() const { return spec_text_; }
  const std::vector<std::string>& frozen() const { return frozen_; }
  // The floats that travel each step: segments cover [this, param_count()).
  size_t exchanged_begin() const { return segments_.back().begin; }

  // What a worker needs in memory besides its batch, and per sample of it:
  // the model at its batch, its batch buffer, the optimizer's slots and a
  // staging copy of weights and slots for resyncs.
  size_t worker_fixed_bytes() const { return fixed_bytes_; }
  size_t worker_bytes_per_sample() const { return bytes_per_sample_; }

  // The averaged gradient lives in the model's gradient buffer, which the
  // hub never fills by backpropagation.
  float* average() { return kernels::CpuBackend::Data(model_->grads()); }
  // How gradients, changes and results travel (proto/wire.h), in order.
  // The average is built, encoded and sent segment by segment as the
  // workers' segments come in; the master applies it once it is whole.
  const std::vector<wire::Segment>& segments() const { return segments_; }
  std::vector<ParamMatrix> param_matrices() const { return model_->ParamMatrices(); }
  // Local SGD's outer update (DiLoCo) over segment k: v = m * v + average,
  // and the average becomes lr * v, the update every worker and the master
  // then add. v starts at zero in each process (a resumed run starts it
  // afresh). False, and nothing changed, when the update would not be
  // finite (a finite average of huge changes can overflow v).
  bool ApplyOuterOptimizer(size_t k, float lr, float m);
  // Encodes segment k of the average as the round's `encoding` (the run's
  // --compress, or what auto chose: hub/policy/compression_choice.h owns
  // it); error feedback keeps what a lossy encoding drops, and the segment
  // is replaced with what the workers will decode. Uncompressed after lossy
  // rounds, it adds what those still owed, so the average sent as floats is
  // the one applied.
  void EncodeSegment(size_t k, Compression encoding);
  // How segment k was last encoded, and its bytes (unless kNone: then the
  // average itself travels).
  Compression encoded_with(size_t k) const { return encoded_with_[k]; }
  const std::string& encoded_segment(size_t k) const { return encoded_average_[k]; }
  // The optimizer step with the average, as every worker takes it.
  void ApplyAverage();
  // Local SGD: the average is the change of the weights over a round; add
  // it to the weights, as every worker does to the same starting weights.
  void ApplyAverageChange();

  uint64_t Digest() const;
  std::vector<float> Weights() const;
  // Weights then optimizer slots, as one float sequence (the weights alone
  // while the optimizer has never stepped: its slots are all zero); *state
  // gets the rest of the optimizer's state (slots cleared).
  std::vector<float> FullState(OptimizerState* state) const;

  // Continue from a checkpoint of this model; throws when it does not fit.
  void Restore(const Checkpoint& checkpoint, const std::string& origin);
  // Writes a checkpoint into dir, keeping the newest few; returns its path.
  std::string SaveCheckpoint(const std::string& dir, int64_t step, int64_t epoch, uint64_t seed,
                             int64_t global_batch) const;

 private:
  kernels::CpuBackend backend_;
  std::string spec_text_;
  std::vector<std::string> frozen_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Optimizer> optimizer_;
  std::vector<float> broadcast_residual_;  // allocated by the first lossy round
  std::vector<float> outer_velocity_;      // allocated by the first outer momentum step
  std::vector<wire::Segment> segments_;
  std::vector<SegmentCodec> codecs_;          // per segment: the broadcast's encoder
  std::vector<std::string> encoded_average_;  // per segment, reused every step
  std::vector<Compression> encoded_with_;     // per segment
  size_t fixed_bytes_ = 0, bytes_per_sample_ = 0;
};

}  // namespace mt
