#include "hub/monitor/live_status.h"

#include <algorithm>
#include <cstdio>

namespace mt {

LiveStatus::LiveStatus(HubEventSink* next) : next_(next) {}

void LiveStatus::SetRun(RunInfo run) {
  std::lock_guard<std::mutex> lock(mu_);
  run_ = std::move(run);
}

bool LiveStatus::OnStep(const LiveStep& s) {
  std::lock_guard<std::mutex> lock(mu_);
  const double wall = std::max(0.0, s.seconds - (any_step_ ? last_.seconds : 0.0));
  const int64_t bytes = s.gradient_bytes_in + s.result_bytes_out;
  const int64_t step_bytes = bytes - (last_.gradient_bytes_in + last_.result_bytes_out);
  step_seconds_.Observe(wall);
  barrier_wait_.Observe(s.barrier_wait_seconds);
  samples_ += s.samples;
  last_ = s;
  any_step_ = true;
  if (state_ == "waiting") state_ = "training";

  latest_ = Reading{s.seconds, s.step, samples_, bytes};
  const Reading& newest_kept = readings_[(readings_next_ + kRateReadings - 1) % kRateReadings];
  if (readings_count_ == 0 || s.seconds - newest_kept.seconds >= kRateEvery) {
    readings_[readings_next_] = latest_;
    readings_next_ = (readings_next_ + 1) % kRateReadings;
    readings_count_ = std::min(readings_count_ + 1, kRateReadings);
  }

  StepSample sample;
  sample.step = s.step;
  sample.steps = std::max<int64_t>(1, s.steps);
  sample.seconds = s.seconds;
  sample.loss_sum = s.loss_sum;
  sample.samples = s.samples;
  sample.wall_ms = 1e3 * wall;
  sample.bytes = static_cast<double>(std::max<int64_t>(0, step_bytes));
  closed_point_ = history_.Add(sample);
  return closed_point_ != nullptr;
}

void LiveStatus::SetClosedPointBatches(std::vector<std::pair<std::string, int>> batches) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_point_) closed_point_->batches = std::move(batches);
  closed_point_ = nullptr;
}

void LiveStatus::OnEvaluation(const EvalPoint& p) {
  std::lock_guard<std::mutex> lock(mu_);
  if (evaluations_.size() == kMaxEvaluations) {
    // Every other one goes, so the series still spans the run.
    size_t kept = 0;
    for (size_t i = 0; i < evaluations_.size(); i += 2) evaluations_[kept++] = evaluations_[i];
    evaluations_.resize(kept);
  }
  evaluations_.push_back(p);
}

void LiveStatus::OnEvent(const HubEvent& e) {
  if (next_) next_->OnEvent(e);
  using Kind = HubEvent::Kind;
  // Per-step events come every step and say nothing the step series does
  // not; evaluations are their own series; batch changes (many, early in a
  // balanced run) show in the workers' rows and would push the membership
  // events out of the list.
  if (e.kind == Kind::kStepDone || e.kind == Kind::kProgress || e.kind == Kind::kEvaluated ||
      e.kind == Kind::kBatchesChanged)
    return;
  std::lock_guard<std::mutex> lock(mu_);
  switch (e.kind) {
    case Kind::kStepPublished:
      if (state_ == "waiting") state_ = "training";
      return;
    case Kind::kRunEnded:
      state_ = "finished";
      stop_reason_ = e.detail;
      break;
    case Kind::kWorkerLeftOut: ++worker_counts_[e.worker].left_out; break;
    case Kind::kWorkerBack: ++worker_counts_[e.worker].back; break;
    case Kind::kSyncPeriodChanged: {
      int from = 0, to = 0;
      if (sync_changes_.size() < kMaxSyncChanges &&
          std::sscanf(e.detail.c_str(), "%d->%d", &from, &to) == 2)
        sync_changes_.push_back({e.step, to});
      break;
    }
    default: break;
  }
  Record(e);
}

void LiveStatus::Record(const HubEvent& e) {
  RecentEvent r;
  r.seconds = std::chrono::duration<double>(Clock::now() - started_).count();
  r.step = e.step;
  r.kind = EventName(e.kind);
  r.worker = e.worker;
  r.worker_name = e.worker_name;
  r.detail = e.detail.size() > kMaxDetail ? e.detail.substr(0, kMaxDetail) + "..." : e.detail;
  if (events_.size() == kMaxEvents) events_.pop_front();
  events_.push_back(std::move(r));
  ++events_total_;
}

ReportJson LiveStatus::HistoryJson() const {
  std::lock_guard<std::mutex> lock(mu_);
  return history_.ToJson();
}

const LiveStatus::Reading& LiveStatus::OldestReading() const {
  return readings_[(readings_next_ + kRateReadings - readings_count_) % kRateReadings];
}

void LiveStatus::Fill(StatusSnapshot& out) const {
  std::lock_guard<std::mutex> lock(mu_);
  out.run = run_;
  out.state = state_;
  out.stop_reason = stop_reason_;
  out.uptime_seconds = std::chrono::duration<double>(Clock::now() - started_).count();
  out.step = run_.first_step;
  if (any_step_) {
    out.train_seconds = last_.seconds;
    out.step = last_.step;
    out.epoch = last_.epoch;
    out.samples = samples_;
    if (last_.samples > 0) out.loss = last_.loss_sum / static_cast<double>(last_.samples);
    out.gradient_bytes_in = last_.gradient_bytes_in;
    out.result_bytes_out = last_.result_bytes_out;
    // Over the recent window; from the first step's reading on, over the
    // whole run so far.
    const Reading& from = OldestReading();
    const double span = latest_.seconds - from.seconds;
    const int64_t steps = latest_.step - from.step;
    if (span > 0 && steps > 0) {
      out.samples_per_second = static_cast<double>(latest_.samples - from.samples) / span;
      out.samples_per_second_span_seconds = span;
      out.bytes_per_step =
          static_cast<double>(latest_.bytes - from.bytes) / static_cast<double>(steps);
      out.eta_seconds = static_cast<double>(std::max<int64_t>(0, run_.total_steps - last_.step)) *
                        span / static_cast<double>(steps);
    }
  }
  if (!evaluations_.empty()) {
    out.test_accuracy = evaluations_.back().test_accuracy;
    out.test_loss = evaluations_.back().test_loss;
  }
  out.step_seconds = step_seconds_;
  out.barrier_wait_seconds = barrier_wait_;
  out.history.clear();
  out.history.reserve(history_.points().size());
  for (const StepPoint& p : history_.points()) {
    SeriesPoint s;
    s.step = p.step;
    s.seconds = p.seconds;
    s.loss = p.loss;
    s.samples_per_second =
        p.span_seconds > 0 ? static_cast<double>(p.samples) / p.span_seconds : 0.0;
    s.step_ms = p.step_ms;
    s.bytes_per_step = p.bytes_per_step;
    out.history.push_back(s);
  }
  out.history_stride = history_.stride();
  out.evaluations = evaluations_;
  out.sync_changes = sync_changes_;
  out.events.assign(events_.begin(), events_.end());
  out.events_total = events_total_;
  for (WorkerRow& row : out.workers) {
    const auto it = worker_counts_.find(row.id);
    if (it == worker_counts_.end()) continue;
    row.left_out_events = it->second.left_out;
    row.back_events = it->second.back;
  }
}

}  // namespace mt
