#include "hub/policy/batch_controller.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "hub/policy/batch_split.h"

namespace mt {

const char* BatchPolicyName(BatchPolicy policy) {
  return policy == BatchPolicy::kFixed ? "fixed" : "balanced";
}

BatchController::BatchController(BatchPolicy policy, BatchControllerOptions options)
    : policy_(policy), options_(options) {}

namespace {

// A weight for one step applied over `steps` steps in one go.
double OverSteps(double per_step, int steps) {
  return 1 - std::pow(1 - per_step, std::max(1, steps));
}

}  // namespace

void BatchController::Observe(int worker, int batch, double compute_ms, double round_trip_ms,
                              int steps) {
  if (batch < 1 || !std::isfinite(compute_ms) || compute_ms < 0) return;
  if (std::isfinite(round_trip_ms) && round_trip_ms >= 0)
    compute_ms = std::clamp(compute_ms, kMinComputeShare * round_trip_ms, round_trip_ms);
  Estimate& e = estimates_[worker];
  // A round of h steps weighs as much as h single steps: its times are
  // sums over those steps, and rounds are h times rarer.
  const double a = OverSteps(options_.smoothing, steps);
  const double per_sample = compute_ms / batch;
  e.ms_per_sample = e.ms_per_sample < 0 ? per_sample : (1 - a) * e.ms_per_sample + a * per_sample;
  if (std::isfinite(round_trip_ms) && round_trip_ms >= 0) {
    const double overhead = std::max(0.0, round_trip_ms - compute_ms);
    e.overhead_ms = e.overhead_ms < 0 ? overhead : (1 - a) * e.overhead_ms + a * overhead;
  }
}

void BatchController::Forget(int worker) {
  estimates_.erase(worker);
  hints_.erase(worker);
}

double BatchController::hint(int worker) const {
  auto it = hints_.find(worker);
  return it == hints_.end() ? -1 : it->second;
}

bool BatchController::Hint(int worker, double ms_per_sample) {
  if (!std::isfinite(ms_per_sample) || ms_per_sample <= 0 || ms_per_sample < hint_floor_) {
    hints_.erase(worker);
    return false;
  }
  hints_[worker] = ms_per_sample;
  return true;
}

double BatchController::HintReference(const std::vector<Member>& members) const {
  // The two fastest claims; the reference is the slower of them.
  double first = std::numeric_limits<double>::infinity(), second = first;
  int claims = 0;
  for (const Member& m : members) {
    const double h = hint(m.worker);
    if (h <= 0) continue;
    ++claims;
    if (h < first) {
      second = first;
      first = h;
    } else if (h < second) {
      second = h;
    }
  }
  if (claims == 0) return -1;
  if (claims == 1) return members.size() == 1 ? first : -1;
  // A pair has no second opinion: the faster claim is believed up to
  // kPairTrustedSpread times the slower one, so a 5x phone beside a 1x one
  // takes 13 to its 64 and a liar's partner still takes 8 (64 + 8, not
  // the 66 of three workers with one liar before the two-claim rule).
  if (members.size() == 2) return std::max(first, second / kPairTrustedSpread);
  return second;
}

int BatchController::FollowingTotal(int per_worker, const std::vector<Member>& members) const {
  for (const Member& m : members)
    if (hint(m.worker) <= 0) return 0;
  const double reference = HintReference(members);
  if (reference <= 0) return 0;
  int total = 0;
  for (const Member& m : members) {
    const double share = per_worker * std::min(1.0, reference / hint(m.worker));
    total += std::clamp(static_cast<int>(std::lround(share)), 1, std::max(1, m.cap));
  }
  return total;
}

double BatchController::ms_per_sample(int worker) const {
  auto it = estimates_.find(worker);
  return it == estimates_.end() ? -1 : it->second.ms_per_sample;
}

double BatchController::overhead_ms(int worker) const {
  auto it = estimates_.find(worker);
  return it == estimates_.end() ? -1 : it->second.overhead_ms;
}

double BatchController::Speeds::StepMs(const std::vector<double>& batches) const {
  double slowest = 0;
  for (size_t i = 0; i < batches.size(); ++i)
    slowest = std::max(slowest, overhead_ms[i] + ms_per_sample[i] * batches[i]);
  return slowest;
}

BatchController::Speeds BatchController::SpeedsOf(const std::vector<Member>& members,
                                                  int steps) const {
  const size_t n = members.size();
  // A worker not measured yet starts from its hint, so a slow phone starts
  // with a small batch; but no faster than the fastest the hub has measured
  // among the others, so a claim of speed wins nothing once the hub has
  // seen real steps. Without a hint it is taken to be like the average of
  // the others.
  double reference = std::numeric_limits<double>::infinity();
  for (const Member& m : members)
    if (const double t = ms_per_sample(m.worker); t > 0) reference = std::min(reference, t);
  if (!std::isfinite(reference)) reference = 0;
  Speeds s;
  s.ms_per_sample.assign(n, -1);
  double t_sum = 0, o_sum = 0;
  int t_known = 0, o_known = 0;
  for (size_t i = 0; i < n; ++i) {
    const int w = members[i].worker;
    const double t = ms_per_sample(w), h = hint(w), o = overhead_ms(w);
    double& known = s.ms_per_sample[i];
    if (t > 0)
      known = t;
    else if (h > 0)
      known = std::max(h, reference);
    if (known > 0) t_sum += known, ++t_known;
    if (o >= 0) o_sum += o, ++o_known;
  }
  for (size_t i = 0; i < n; ++i) {
    if (s.ms_per_sample[i] <= 0) s.ms_per_sample[i] = t_known ? t_sum / t_known : 1.0;
    const double oi = overhead_ms(members[i].worker);
    s.overhead_ms.push_back((oi >= 0 ? oi : (o_known ? o_sum / o_known : 0.0)) / steps);
  }
  return s;
}

std::vector<double> BatchController::Floors(int total, const std::vector<Member>& members,
                                            int min_batch) {
  const size_t n = members.size();
  const int equal_share = n ? std::max(1, total / static_cast<int>(n)) : 1;
  std::vector<double> floor(n);
  for (size_t i = 0; i < n; ++i)
    floor[i] = std::min({std::max(1, min_batch), equal_share, std::max(1, members[i].cap)});
  return floor;
}

std::vector<double> BatchController::BalancedTargets(int total, const std::vector<Member>& members,
                                                     const Speeds& speeds,
                                                     const std::vector<double>& floor) const {
  const size_t n = members.size();
  const std::vector<double>& t = speeds.ms_per_sample;
  const std::vector<double>& o = speeds.overhead_ms;
  std::vector<double> cap(n);
  for (size_t i = 0; i < n; ++i) cap[i] = std::max(1, members[i].cap);
  // Find the finish time T at which the workers together take `total`
  // samples: b_i(T) = clamp((T - o_i) / t_i, floor_i, cap_i) grows with T.
  auto batches_at = [&](double finish, std::vector<double>* b) {
    double sum = 0;
    for (size_t i = 0; i < n; ++i) {
      const double bi = std::clamp((finish - o[i]) / t[i], floor[i], cap[i]);
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

double BatchController::PredictStepMs(int total, const std::vector<Member>& members, int steps,
                                      int min_batch) const {
  if (members.empty() || total < 1) return -1;
  for (const Member& m : members)
    if (ms_per_sample(m.worker) <= 0 || overhead_ms(m.worker) < 0) return -1;
  // Members whose memory cannot hold the step never finish it.
  int64_t room = 0;
  for (const Member& m : members) room += std::max(1, m.cap);
  if (room < total) return std::numeric_limits<double>::infinity();
  const Speeds speeds = SpeedsOf(members, std::max(1, steps));
  const std::vector<double> floor = Floors(total, members, min_batch);
  return speeds.StepMs(BalancedTargets(total, members, speeds, floor));
}

std::vector<int> BatchController::Next(int total, const std::vector<Member>& members, int steps,
                                       int min_batch) {
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
  const Speeds speeds = SpeedsOf(members, std::max(1, steps));
  const std::vector<double> floor = Floors(total, members, min_batch);
  target = BalancedTargets(total, members, speeds, floor);
  const bool same = workers == last_workers_ && total == last_total_;
  if (same) {
    // Stay unless moving buys a step shorter by more than the dead band:
    // timing noise then leaves sizes alone instead of moving them to and fro.
    bool fits = true;
    for (size_t i = 0; i < n; ++i)
      fits = fits && last_batches_[i] <= std::max(1, caps[i]) && last_batches_[i] >= floor[i];
    const std::vector<double> last(last_batches_.begin(), last_batches_.end());
    if (fits && speeds.StepMs(last) <= (1 + options_.dead_band) * speeds.StepMs(target))
      return last_batches_;
    // Damped: part of the way from the last batches towards the target (as
    // far as that many single steps would have moved, for a round).
    const double damping = OverSteps(options_.damping, steps);
    for (size_t i = 0; i < n; ++i)
      target[i] = std::max(floor[i], last_batches_[i] + damping * (target[i] - last_batches_[i]));
  }
  std::vector<int> next = SplitBatch(total, target, caps);
  last_workers_ = workers;
  last_batches_ = next;
  last_total_ = total;
  return next;
}

}  // namespace mt
