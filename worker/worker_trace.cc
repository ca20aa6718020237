#include "worker/worker_trace.h"

#include <spdlog/spdlog.h>

#include <exception>

#include "core/trace/chrome_trace.h"
#include "proto/wire.h"
#include "wire/trace_wire.h"

namespace mt {

WorkerTrace::WorkerTrace(std::string path, std::string process_name)
    : path_(std::move(path)), process_name_(std::move(process_name)) {
  if (path_.empty()) return;
  trace::CheckTraceDirectory(path_);
  file_ = std::make_unique<trace::TraceRecorder>(trace::TraceRecorder::kDefaultCapacity,
                                                 trace::kTrackCompute);
}

WorkerTrace::~WorkerTrace() {
  try {
    Write();       // unless the run did
  } catch (...) {  // Write logs its own failures; nothing may leave a destructor
  }
}

void WorkerTrace::SetSending(bool on) {
  std::lock_guard<std::mutex> lock(mu_);
  if (on) pending_.reserve(wire::kMaxTraceSpans);
  pending_.clear();
  pending_dropped_ = 0;
  plan_hub_time_us_ = plan_received_us_ = 0;
  sending_ = on;
}

void WorkerTrace::NameLayers(const Model& model) {
  std::lock_guard<std::mutex> lock(mu_);
  layer_names_.clear();
  for (const auto& layer : model.layers()) layer_names_.push_back(layer->name());
}

void WorkerTrace::Add(const trace::Span& span) {
  trace::Span s = span;
  if (s.track == trace::kTrackDefault) {
    const int32_t current = trace::CurrentTrack();
    s.track = current == trace::kTrackDefault ? trace::kTrackCompute : current;
  }
  if (s.step < 0) s.step = step_.load(std::memory_order_relaxed);
  if (file_) file_->Add(s);
  if (!sending()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (pending_.size() < static_cast<size_t>(wire::kMaxTraceSpans))
    pending_.push_back(s);
  else
    ++pending_dropped_;
}

void WorkerTrace::OnPlan(int64_t hub_time_us, int64_t received_us) {
  std::lock_guard<std::mutex> lock(mu_);
  plan_hub_time_us_ = hub_time_us;
  plan_received_us_ = received_us;
}

void WorkerTrace::TakeBatch(int64_t step, proto::TraceSpans* out) {
  std::lock_guard<std::mutex> lock(mu_);
  trace::BatchStamps stamps{plan_hub_time_us_, plan_received_us_, trace::NowMicros()};
  trace::EncodeSpans(pending_.data(), pending_.size(), pending_dropped_, stamps, step, out);
  pending_.clear();
  pending_dropped_ = 0;
  // A plan answers one gradient: a second one (a state's plan, a round's
  // steps ahead) must not reuse its stamps as if no time had passed.
  plan_hub_time_us_ = plan_received_us_ = 0;
}

void WorkerTrace::Write() {
  if (!file_ || written_.exchange(true)) return;
  trace::TraceProcess p;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < layer_names_.size(); ++i)
      p.index_names[static_cast<int32_t>(i)] = layer_names_[i];
  }
  p.pid = 1;
  p.name = process_name_;
  p.threads[trace::kTrackCompute] = "compute";
  p.threads[trace::kTrackLookahead] = "steps ahead";
  p.spans = file_->Spans();
  p.dropped = file_->dropped();
  try {
    trace::WriteChromeTrace(path_, {p}, {{"clock", "this process's steady clock"}});
    spdlog::info("trace: {}", path_);
  } catch (const std::exception& e) {
    spdlog::error("could not write the trace: {}", e.what());
  }
}

}  // namespace mt
