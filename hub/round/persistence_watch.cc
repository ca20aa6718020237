#include "hub/round/persistence_watch.h"

#include <algorithm>

namespace mt {

PersistenceWatch::Entry& PersistenceWatch::At(int id) {
  const size_t i = static_cast<size_t>(id);
  if (i >= entries_.size()) entries_.resize(i + 1);
  Entry& e = entries_[i];
  if (e.step.empty()) {
    e.step.assign(kBuckets, 0.0);
    e.mean.assign(kBuckets, 0.0);
  }
  return e;
}

PersistenceWatch::Entry& PersistenceWatch::InThisStep(int id) {
  Entry& e = At(id);
  if (e.summed_in != step_) {
    std::fill(e.step.begin(), e.step.end(), 0.0);
    e.step_energy = 0;
    e.summed_in = step_;
  }
  return e;
}

void PersistenceWatch::Add(int id, const float* sketch, double energy) {
  Entry& e = InThisStep(id);
  for (size_t b = 0; b < kBuckets; ++b) e.step[b] += sketch[b];
  e.step_energy += energy;
}

int PersistenceWatch::EndStep(const int* ids, size_t n) {
  if (scratch_.size() < n) scratch_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    Entry& e = InThisStep(ids[i]);
    // Running means from zero, divided by the weight they hold so far (as
    // Adam corrects its moments): the first steps are not taken for a
    // direction the worker keeps.
    const double keep = 1 - kSmoothing;
    double mean_sq = 0;
    for (size_t b = 0; b < kBuckets; ++b) {
      e.mean[b] = keep * e.mean[b] + kSmoothing * e.step[b];
      mean_sq += e.mean[b] * e.mean[b];
    }
    e.energy = keep * e.energy + kSmoothing * e.step_energy;
    e.weight = keep * e.weight + kSmoothing;
    e.persistence = e.energy > 0 ? mean_sq / (e.energy * e.weight) : 0;
    ++e.steps;
    if (e.steps >= kMinSteps) e.peak = std::max(e.peak, e.persistence);
    scratch_[i] = e.persistence;
  }
  const double median = LowerMedian(scratch_.data(), n);
  int worst = -1;
  for (size_t i = 0; i < n; ++i) {
    const Entry& e = entries_[static_cast<size_t>(ids[i])];
    if (e.steps < kMinSteps || e.persistence <= kBound || e.persistence <= kRatio * median)
      continue;
    if (worst < 0 || e.persistence > entries_[static_cast<size_t>(ids[worst])].persistence)
      worst = static_cast<int>(i);
  }
  return worst;
}

double PersistenceWatch::persistence(int id) const {
  const size_t i = static_cast<size_t>(id);
  return i < entries_.size() ? entries_[i].persistence : 0;
}

double PersistenceWatch::peak(int id) const {
  const size_t i = static_cast<size_t>(id);
  return i < entries_.size() ? entries_[i].peak : 0;
}

}  // namespace mt
