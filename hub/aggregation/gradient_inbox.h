// One worker's gradient for the current step, filled segment by segment
// (proto/wire.h: last layer first) as it arrives and validated before it can
// reach the average: a bad chunk is refused with a reason, and the
// half-received gradient is thrown away, so the model is never poisoned.
// The hub averages each segment as soon as every participant's is in.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/compress/segment_codec.h"
#include "hub.pb.h"
#include "proto/wire.h"

namespace mt {

class GradientInbox {
 public:
  // `segments` tile the parameter vector in the order chunks must arrive.
  // Each chunk says how it is encoded (GradientChunk.compression): with
  // --compress auto the encoding changes during a run.
  // `matrices`: the model's (Model::ParamMatrices), which lowrank factors.
  GradientInbox(std::vector<wire::Segment> segments, size_t param_count,
                const std::vector<ParamMatrix>& matrices = {})
      : param_count_(param_count),
        segments_(std::move(segments)),
        codecs_(MakeSegmentCodecs(segments_, matrices)) {}

  // Expect a gradient for `step` computed on `batch` samples.
  void Expect(int64_t step, int batch);
  void Discard() { expecting_ = false; }
  // Discards and frees the gradient buffer (a worker gone for good). The
  // buffer is allocated at the first Expect, so a Join that never trains
  // costs the hub no gradient's worth of memory.
  void Release() {
    Discard();
    complete_ = false;
    std::vector<float>().swap(grad_);
  }
  // Returns "" when accepted, else why not.
  std::string Accept(const proto::GradientChunk& chunk);
  // Secure aggregation: chunks must carry masked values (GradientChunk.
  // masked), kept bit for bit in the float buffer until Unmask.
  void set_masked(bool masked) { masked_ = masked; }
  // The unmasked average of the step's survivors (a whole parameter
  // vector) in place of this worker's masked update.
  void Unmask(const float* average) { std::copy(average, average + param_count_, grad_.begin()); }

  bool complete() const { return complete_; }
  // Segments accepted so far for the expected step (all of them once complete).
  size_t segments_received() const { return expecting_ || complete_ ? next_ : 0; }
  // Whether Accept's last refusal was for non-finite values or loss (a
  // diverged model, or a broken worker) rather than a malformed message.
  bool refused_non_finite() const { return non_finite_; }
  bool expecting() const { return expecting_; }
  int64_t step() const { return step_; }
  int batch() const { return batch_; }
  double loss_sum() const { return loss_sum_; }
  double compute_ms() const { return compute_ms_; }
  // The worker's last exchange as it saw it (GradientChunk.exchange_ms).
  double exchange_ms() const { return exchange_ms_; }
  bool has_digest() const { return has_digest_; }
  uint64_t digest() const { return digest_; }
  const std::vector<float>& gradient() const { return grad_; }
  // When the gradient became whole, as the hub's clock saw it (the caller
  // stamps it: the inbox keeps no clock).
  void StampComplete(std::chrono::steady_clock::time_point at) { completed_at_ = at; }
  std::chrono::steady_clock::time_point completed_at() const { return completed_at_; }

 private:
  size_t param_count_;
  std::vector<float> grad_;  // param_count_ floats from the first Expect
  std::vector<wire::Segment> segments_;
  // Per segment; this inbox's own, as it decodes on its worker's thread.
  std::vector<SegmentCodec> codecs_;
  size_t next_ = 0;  // the segment expected next
  int64_t step_ = -1;
  int batch_ = 0;
  bool expecting_ = false;
  bool complete_ = false;
  bool non_finite_ = false;
  bool masked_ = false;
  double loss_sum_ = 0, compute_ms_ = 0, exchange_ms_ = 0;
  bool has_digest_ = false;
  uint64_t digest_ = 0;
  std::chrono::steady_clock::time_point completed_at_;
};

}  // namespace mt
