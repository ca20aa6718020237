#include "worker/gradient_sender.h"

#include <cmath>
#include <stdexcept>

#include "core/trace/span.h"
#include "wire/compression_proto.h"
#include "worker/worker_trace.h"

namespace mt {

GradientSender::GradientSender(HubLink& link, const proto::JoinReply& join, size_t param_count,
                               size_t exchanged_begin, const std::vector<ParamMatrix>& matrices)
    : link_(link),
      segments_(wire::SegmentsFromBegins({join.segments().begin(), join.segments().end()},
                                         param_count, exchanged_begin)),
      param_count_(param_count) {
  if (segments_.empty())
    throw std::runtime_error(
        "the hub's gradient segments do not cover the model's trained "
        "parameters " +
        std::to_string(exchanged_begin) + " to " + std::to_string(param_count));
  codecs_ = MakeSegmentCodecs(segments_, matrices);
  set_compression(FromProto(join.compression()));
}

void GradientSender::set_compression(Compression c) {
  compression_ = c;
  if (c != Compression::kNone && residual_.empty()) residual_.assign(param_count_, 0.0f);
}

void GradientSender::set_trace(WorkerTrace* trace) {
  trace_ = trace;
  if (trace_ && trace_->sending() && !trace_batch_)
    trace_batch_ = std::make_unique<proto::TraceSpans>();
}

void GradientSender::Begin(int64_t step, const float* grads) {
  step_ = step;
  grads_ = grads;
  next_ = 0;
  early_send_seconds_ = 0;
}

void GradientSender::OnGradientsFrom(size_t begin) {
  while (next_ + 1 < segments_.size() && segments_[next_].begin >= begin && !broken_) {
    if (before_early_send_) before_early_send_();
    const auto t0 = std::chrono::steady_clock::now();
    Send(next_++, nullptr);
    early_send_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (after_early_send_) after_early_send_();
  }
}

bool GradientSender::Finish(const Report& report) {
  while (next_ < segments_.size() && !broken_) {
    const size_t k = next_++;
    Send(k, k + 1 == segments_.size() ? &report : nullptr);
  }
  return !broken_;
}

bool GradientSender::Send(size_t k, const Report* report) {
  const wire::Segment& seg = segments_[k];
  const int64_t encode_begin = trace_ ? trace::NowMicros() : 0;
  proto::WorkerMessage& m = outgoing_;
  auto* gc = m.mutable_gradient();
  gc->set_step(step_);
  gc->set_offset(seg.begin);
  gc->set_compression(ToProto(compression_));
  if (masker_) {
    auto* masked = gc->mutable_masked();
    masked->Resize(static_cast<int>(seg.size()), 0);  // keeps its capacity from step to step
    masker_(seg.begin, grads_ + seg.begin, seg.size(), masked->mutable_data());
    gc->clear_values();
    gc->clear_packed();
  } else if (compression_ == Compression::kNone && residual_.empty()) {
    wire::PackFloats(grads_ + seg.begin, seg.size(), gc->mutable_values());
    gc->clear_packed();
  } else {
    // After lossy rounds, none sends what they still owe too: as bytes.
    codecs_[k].Encode(compression_, grads_ + seg.begin, residual_.data() + seg.begin,
                      gc->mutable_packed());
    gc->clear_values();
  }
  gc->set_last(report != nullptr);
  if (report) {
    gc->set_batch(report->samples);
    gc->set_loss_sum(report->loss_sum);
    gc->set_compute_ms(report->compute_ms);
    gc->set_exchange_ms(report->exchange_ms);
    if (report->has_digest)
      gc->set_weights_digest(report->digest);
    else
      gc->clear_weights_digest();
    // Only what is known travels; the rest stays unset.
    const DeviceState& dev = report->device;
    auto* ds = gc->mutable_device();
    ds->Clear();
    if (dev.battery_percent >= 0) ds->set_battery_percent(dev.battery_percent);
    if (dev.charging >= 0) ds->set_charging(dev.charging == 1);
    if (dev.unmetered >= 0) ds->set_unmetered(dev.unmetered == 1);
    if (!std::isnan(dev.temperature_c)) ds->set_temperature_c(dev.temperature_c);
  } else {
    gc->set_batch(0);
    gc->set_loss_sum(0);
    gc->set_compute_ms(0);
    gc->set_exchange_ms(0);
    gc->clear_weights_digest();
    gc->clear_device();
  }
  const int index = static_cast<int>(k);
  int64_t send_begin = 0;
  if (trace_) {
    send_begin = trace::NowMicros();
    trace_->Add(trace::MakeSpan(trace::SpanKind::kEncode, encode_begin, send_begin, index, step_));
    if (report && trace_->sending() && trace_batch_) {
      trace_->TakeBatch(step_, trace_batch_.get());
      gc->set_allocated_trace(trace_batch_.release());
    }
  }
  if (!link_.Send(m)) broken_ = true;
  if (gc->has_trace()) trace_batch_.reset(gc->release_trace());
  if (trace_)
    trace_->Add(
        trace::MakeSpan(trace::SpanKind::kSend, send_begin, trace::NowMicros(), index, step_));
  return !broken_;
}

}  // namespace mt
