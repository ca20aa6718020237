// A gradient (or a round's change) on its way to the hub: one message per
// segment, in the order the hub gave at Join (JoinReply.segments: last layer
// first). Listening to the backward pass, it sends each segment as soon as
// its layers are done, so the hub averages and answers it while the layers
// below are still computing; the last segment goes when the pass ends,
// with the step's report.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/compress/gradient_codec.h"
#include "core/compress/segment_codec.h"
#include "core/model/model.h"
#include "hub.pb.h"
#include "proto/wire.h"
#include "worker/device_state.h"
#include "worker/hub_link.h"

namespace mt {

class WorkerTrace;

class GradientSender final : public GradientListener {
 public:
  // Throws when the hub's segments do not tile floats [exchanged_begin,
  // param_count) (from the lowest trained layer up).
  // `matrices`: the model's (Model::ParamMatrices), which lowrank factors.
  GradientSender(HubLink& link, const proto::JoinReply& join, size_t param_count,
                 size_t exchanged_begin = 0, const std::vector<ParamMatrix>& matrices = {});

  const std::vector<wire::Segment>& segments() const { return segments_; }
  // How the gradients or changes sent from now on are encoded: the hub's
  // plan for the round says (StepPlan.compression).
  Compression compression() const { return compression_; }
  void set_compression(Compression c);

  // Run before and after each segment sent from inside the backward pass:
  // mtworker --slowdown pays for the compute so far before, and starts
  // counting again after (sending is not compute a slower device would
  // stretch).
  void set_early_send_hooks(std::function<void()> before, std::function<void()> after) {
    before_early_send_ = std::move(before);
    after_early_send_ = std::move(after);
  }

  // Secure aggregation: each segment [first, first + n) of values is
  // masked into n ring values and travels in GradientChunk.masked (null:
  // values travel as the compression says).
  using Masker = std::function<void(size_t first, const float* values, size_t n, uint32_t* out)>;
  void set_masker(Masker masker) { masker_ = std::move(masker); }

  // --trace (worker/worker_trace.h; null: off): encode and send spans, and
  // when the hub asked for them, the spans since the last gradient on the
  // last chunk.
  void set_trace(WorkerTrace* trace);

  // A new gradient of `step` in `grads`, which the caller fills (during the
  // backward pass) and keeps alive until Finish: nothing of it sent yet.
  void Begin(int64_t step, const float* grads);
  // GradientListener: sends every segment now wholly final, but never the
  // last one (it carries the report).
  void OnGradientsFrom(size_t begin) override;

  struct Report {
    int samples = 0;
    double loss_sum = 0, compute_ms = 0;
    double exchange_ms = 0;  // the last exchange as this worker saw it
    bool has_digest = false;
    uint64_t digest = 0;
    DeviceState device;
  };
  // Sends what is left, the last segment with `report`. False once the
  // stream has broken (the next Read sees it).
  bool Finish(const Report& report);
  // Seconds spent sending from inside the backward pass since Begin, which
  // is not compute.
  double early_send_seconds() const { return early_send_seconds_; }

 private:
  bool Send(size_t k, const Report* report);

  HubLink& link_;
  std::vector<wire::Segment> segments_;
  std::vector<SegmentCodec> codecs_;  // per segment
  Compression compression_ = Compression::kNone;
  // Error feedback: what encoding has not yet sent. Allocated by the first
  // lossy round; from then on every message, uncompressed ones too, sends
  // what it holds.
  std::vector<float> residual_;
  size_t param_count_;
  std::function<void()> before_early_send_, after_early_send_;
  Masker masker_;
  proto::WorkerMessage outgoing_;  // reused: its payload keeps its capacity
  WorkerTrace* trace_ = nullptr;
  // Lent to the last chunk while it is written, then taken back, so the
  // spans' fields keep their capacity from step to step.
  std::unique_ptr<proto::TraceSpans> trace_batch_;
  const float* grads_ = nullptr;
  int64_t step_ = 0;
  size_t next_ = 0;  // the next segment to send
  bool broken_ = false;
  double early_send_seconds_ = 0;
};

}  // namespace mt
