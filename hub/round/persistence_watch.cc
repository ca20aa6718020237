#include "hub/round/persistence_watch.h"

#include <algorithm>
#include <cmath>

namespace mt {

namespace {

double Cosine(const std::vector<double>& a, const std::vector<double>& b) {
  double dot = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    dot += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  return aa > 0 && bb > 0 ? dot / std::sqrt(aa * bb) : 0;
}

}  // namespace

double PersistenceWatch::Floor(int steps) {
  if (steps <= 0) return 1;
  // Weights s k^(t-i), k = 1 - s: the mean of independent residuals keeps
  // sum(w^2) / (sum w)^2 of their energy.
  const double keep = 1 - kSmoothing;
  const double sum = 1 - std::pow(keep, steps);
  const double squares =
      kSmoothing * kSmoothing * (1 - std::pow(keep, 2 * steps)) / (1 - keep * keep);
  return squares / (sum * sum);
}

void PersistenceWatch::Trace::Fold(const std::vector<double>& step, double step_energy) {
  // Running means from zero, divided by the weight they hold so far (as
  // Adam corrects its moments): the first steps are not taken for a
  // direction the worker keeps.
  const double keep = 1 - kSmoothing;
  double mean_sq = 0;
  for (size_t b = 0; b < kBuckets; ++b) {
    mean[b] = keep * mean[b] + kSmoothing * step[b];
    mean_sq += mean[b] * mean[b];
  }
  energy = keep * energy + kSmoothing * step_energy;
  weight = keep * weight + kSmoothing;
  persistence = energy > 0 ? mean_sq / (energy * weight) : 0;
  ++steps;
}

PersistenceWatch::Entry& PersistenceWatch::At(int id, int lineage) {
  const size_t i = static_cast<size_t>(id);
  if (i >= entries_.size()) entries_.resize(i + 1);
  Entry& e = entries_[i];
  if (e.step.empty()) {
    e.step.assign(kBuckets, 0.0);
    e.own.mean.assign(kBuckets, 0.0);
    e.lineage = lineage;
    // Where an earlier session of its lineage left off.
    if (const Trace* record = lineages_.Find(lineage); record && record->steps > 0) {
      e.line = *record;
      e.inherited = record->mean;
    } else {
      e.line.mean.assign(kBuckets, 0.0);
    }
  }
  return e;
}

PersistenceWatch::Entry& PersistenceWatch::InThisStep(int id, int lineage) {
  Entry& e = At(id, lineage);
  if (e.summed_in != step_) {
    std::fill(e.step.begin(), e.step.end(), 0.0);
    e.step_energy = 0;
    e.summed_in = step_;
  }
  return e;
}

const PersistenceWatch::Entry* PersistenceWatch::Find(int id) const {
  const size_t i = static_cast<size_t>(id);
  return i < entries_.size() && !entries_[i].step.empty() ? &entries_[i] : nullptr;
}

void PersistenceWatch::Add(int id, const float* sketch, double energy, int lineage) {
  Entry& e = InThisStep(id, lineage);
  for (size_t b = 0; b < kBuckets; ++b) e.step[b] += sketch[b];
  e.step_energy += energy;
}

int PersistenceWatch::EndStep(const int* ids, size_t n) {
  if (own_.size() < n) {
    own_.resize(n);
    line_.resize(n);
  }
  for (size_t i = 0; i < n; ++i) {
    Entry& e = InThisStep(ids[i]);
    e.own.Fold(e.step, e.step_energy);
    e.line.Fold(e.step, e.step_energy);
    e.continues = !e.inherited.empty() && Cosine(e.own.mean, e.inherited) > kContinues;
    if (e.own.steps >= kMinSteps) e.peak = std::max(e.peak, e.own.persistence);
    if (e.continues && e.line.steps >= kMinSteps) e.peak = std::max(e.peak, e.line.persistence);
    lineages_.Offer(
        e.lineage, ids[i], e.line,
        [](const Trace& a, const Trace& b) { return a.excess() > b.excess(); },
        e.inherited.empty() || e.continues);
    own_[i] = e.own.persistence;
    // The median of what each is judged on: a session that took over an
    // attacker's record without keeping its direction (an honest phone
    // behind its address) counts with its own persistence, or such
    // neighbours would lift the median above the attacker's reach.
    line_[i] = e.continues ? e.line.persistence : e.own.persistence;
  }
  // Medians of copies: own_ and line_ are read again below.
  sorted_.assign(own_.begin(), own_.begin() + static_cast<std::ptrdiff_t>(n));
  const double own_median = LowerMedian(sorted_.data(), n);
  sorted_.assign(line_.begin(), line_.begin() + static_cast<std::ptrdiff_t>(n));
  const double line_median = LowerMedian(sorted_.data(), n);
  int worst = -1;
  double worst_value = 0;
  for (size_t i = 0; i < n; ++i) {
    const Entry& e = entries_[static_cast<size_t>(ids[i])];
    double value = 0;
    if (e.own.steps >= kMinSteps && own_[i] > kBound && own_[i] > kRatio * own_median)
      value = own_[i];
    // Judged on its lineage's record while it keeps that record's direction.
    if (e.continues && e.line.steps >= kMinSteps && line_[i] > kBound &&
        line_[i] > kRatio * line_median)
      value = std::max(value, line_[i]);
    if (value > 0 && (worst < 0 || value > worst_value)) {
      worst = static_cast<int>(i);
      worst_value = value;
    }
  }
  return worst;
}

double PersistenceWatch::persistence(int id) const {
  const Entry* e = Find(id);
  if (!e) return 0;
  return e->continues ? std::max(e->own.persistence, e->line.persistence) : e->own.persistence;
}

double PersistenceWatch::peak(int id) const {
  const Entry* e = Find(id);
  return e ? e->peak : 0;
}

bool PersistenceWatch::continues(int id) const {
  const Entry* e = Find(id);
  return e && e->continues;
}

}  // namespace mt
