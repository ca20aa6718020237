#include "core/train/step_history.h"

#include <algorithm>
#include <stdexcept>

namespace mt {

StepHistory::StepHistory(size_t max_points) : max_points_(std::max<size_t>(2, max_points)) {
  points_.reserve(max_points_);
}

StepPoint* StepHistory::Add(const StepSample& s) {
  if (s.steps < 1) throw std::invalid_argument("step history: a step covers at least one step");
  if (pending_.steps == 0) pending_.span_seconds = 0;
  pending_.step = s.step;
  pending_.steps += s.steps;
  pending_.samples += s.samples;
  pending_.seconds = s.seconds;
  // The first step's span is its own time: before it the run was starting.
  pending_.span_seconds +=
      started_ ? std::max(0.0, s.seconds - last_seconds_) : std::max(0.0, s.wall_ms / 1e3);
  last_seconds_ = s.seconds;
  started_ = true;
  pending_loss_sum_ += s.loss_sum;
  pending_ms_sum_ += s.wall_ms;
  pending_bytes_sum_ += s.bytes;
  if (pending_.steps < stride_) return nullptr;

  const double steps = static_cast<double>(pending_.steps);
  pending_.loss =
      pending_.samples > 0 ? pending_loss_sum_ / static_cast<double>(pending_.samples) : 0.0;
  pending_.step_ms = pending_ms_sum_ / steps;
  pending_.bytes_per_step = pending_bytes_sum_ / steps;
  if (points_.size() == max_points_) Halve();
  points_.push_back(std::move(pending_));
  pending_ = StepPoint{};
  pending_loss_sum_ = pending_ms_sum_ = pending_bytes_sum_ = 0;
  return &points_.back();
}

void StepHistory::Merge(StepPoint& into, const StepPoint& later) {
  const double a = static_cast<double>(into.steps), b = static_cast<double>(later.steps);
  const int64_t samples = into.samples + later.samples;
  into.loss = samples > 0 ? (into.loss * static_cast<double>(into.samples) +
                             later.loss * static_cast<double>(later.samples)) /
                                static_cast<double>(samples)
                          : 0.0;
  into.step_ms = (into.step_ms * a + later.step_ms * b) / (a + b);
  into.bytes_per_step = (into.bytes_per_step * a + later.bytes_per_step * b) / (a + b);
  into.samples = samples;
  into.steps += later.steps;
  into.step = later.step;
  into.seconds = later.seconds;
  into.span_seconds += later.span_seconds;
  into.batches = later.batches;
}

void StepHistory::Halve() {
  size_t kept = 0;
  for (size_t i = 0; i < points_.size(); i += 2) {
    StepPoint p = std::move(points_[i]);
    if (i + 1 < points_.size()) Merge(p, points_[i + 1]);
    points_[kept++] = std::move(p);
  }
  points_.resize(kept);
  stride_ *= 2;
}

ReportJson StepHistory::ToJson() const {
  ReportJson points = ReportJson::array();
  for (const StepPoint& p : points_) {
    ReportJson j;
    j["step"] = p.step;
    j["steps"] = p.steps;
    j["seconds"] = p.seconds;
    j["loss"] = p.loss;
    j["samples"] = p.samples;
    j["step_ms"] = p.step_ms;
    j["samples_per_second"] =
        p.span_seconds > 0 ? static_cast<double>(p.samples) / p.span_seconds : 0.0;
    if (p.bytes_per_step > 0) j["bytes_per_step"] = p.bytes_per_step;
    if (!p.batches.empty()) {
      ReportJson batches = ReportJson::object();
      for (const auto& [name, batch] : p.batches) batches[name] = batch;
      j["batches"] = std::move(batches);
    }
    points.push_back(std::move(j));
  }
  return {{"stride", stride_}, {"points", std::move(points)}};
}

}  // namespace mt
