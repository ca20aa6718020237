#include "hub/batch_controller.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "hub/batch_split.h"

namespace mt {

BatchPolicy ParseBatchPolicy(const std::string& name) {
  if (name == "fixed") return BatchPolicy::kFixed;
  if (name == "balanced") return BatchPolicy::kBalanced;
  throw std::invalid_argument("batch policy '" + name + "': expected fixed or balanced");
}

BatchController::BatchController(BatchPolicy policy, BatchControllerOptions options)
    : policy_(policy), options_(options) {}

void BatchController::Observe(int worker, int batch, double compute_ms, double round_trip_ms) {
  if (batch < 1 || !std::isfinite(compute_ms) || compute_ms < 0) return;
  Estimate& e = estimates_[worker];
  const double a = options_.smoothing;
  const double per_sample = compute_ms / batch;
  e.ms_per_sample = e.ms_per_sample < 0 ? per_sample : (1 - a) * e.ms_per_sample + a * per_sample;
  if (std::isfinite(round_trip_ms) && round_trip_ms >= 0) {
    const double overhead = std::max(0.0, round_trip_ms - compute_ms);
    e.overhead_ms = e.overhead_ms < 0 ? overhead : (1 - a) * e.overhead_ms + a * overhead;
  }
}

void BatchController::Forget(int worker) { estimates_.erase(worker); }

double BatchController::ms_per_sample(int worker) const {
  auto it = estimates_.find(worker);
  return it == estimates_.end() ? -1 : it->second.ms_per_sample;
}

double BatchController::overhead_ms(int worker) const {
  auto it = estimates_.find(worker);
  return it == estimates_.end() ? -1 : it->second.overhead_ms;
}

std::vector<double> BatchController::BalancedTargets(int total, const std::vector<Member>& members) const {
  const size_t n = members.size();
  // A worker not measured yet is taken to be like the average of the others.
  double t_sum = 0, o_sum = 0;
  int t_known = 0, o_known = 0;
  for (const Member& m : members) {
    const double t = ms_per_sample(m.worker), o = overhead_ms(m.worker);
    if (t > 0) t_sum += t, ++t_known;
    if (o >= 0) o_sum += o, ++o_known;
  }
  std::vector<double> t(n), o(n), cap(n);
  for (size_t i = 0; i < n; ++i) {
    const double ti = ms_per_sample(members[i].worker), oi = overhead_ms(members[i].worker);
    t[i] = ti > 0 ? ti : (t_known ? t_sum / t_known : 1.0);
    o[i] = oi >= 0 ? oi : (o_known ? o_sum / o_known : 0.0);
    cap[i] = std::max(1, members[i].cap);
  }
  // Find the finish time T at which the workers together take `total`
  // samples: b_i(T) = clamp((T - o_i) / t_i, 1, cap_i) grows with T.
  auto batches_at = [&](double finish, std::vector<double>* b) {
    double sum = 0;
    for (size_t i = 0; i < n; ++i) {
      const double bi = std::clamp((finish - o[i]) / t[i], 1.0, cap[i]);
      if (b) (*b)[i] = bi;
      sum += bi;
    }
    return sum;
  };
  double lo = 0, hi = 0;
  for (size_t i = 0; i < n; ++i) hi = std::max(hi, o[i] + t[i] * cap[i]);
  for (int iter = 0; iter < 100; ++iter) {
    const double mid = 0.5 * (lo + hi);
    (batches_at(mid, nullptr) < total ? lo : hi) = mid;
  }
  std::vector<double> b(n);
  batches_at(hi, &b);
  return b;
}

std::vector<int> BatchController::Next(int total, const std::vector<Member>& members) {
  const size_t n = members.size();
  std::vector<int> caps(n), workers(n);
  for (size_t i = 0; i < n; ++i) {
    caps[i] = members[i].cap;
    workers[i] = members[i].worker;
  }
  std::vector<double> target(n);
  if (policy_ == BatchPolicy::kFixed) {
    for (size_t i = 0; i < n; ++i) target[i] = members[i].share;
    return SplitBatch(total, target, caps);
  }
  target = BalancedTargets(total, members);
  const bool same = workers == last_workers_ && total == last_total_;
  if (same) {
    // Within the dead band of the target already: stay, so noise does not
    // move sizes back and forth.
    bool close = true;
    for (size_t i = 0; i < n; ++i)
      close = close && std::abs(target[i] - last_batches_[i]) <= std::max(1.0, options_.dead_band * target[i]) &&
              last_batches_[i] <= std::max(1, caps[i]);
    if (close) return last_batches_;
    // Damped: part of the way from the last batches towards the target.
    for (size_t i = 0; i < n; ++i) target[i] = last_batches_[i] + options_.damping * (target[i] - last_batches_[i]);
  }
  std::vector<int> next = SplitBatch(total, target, caps);
  last_workers_ = workers;
  last_batches_ = next;
  last_total_ = total;
  return next;
}

}  // namespace mt
