#include "hub/round/alignment_watch.h"

#include <cmath>

namespace mt {

void AlignmentWatch::BeginStep() {
  for (Entry& e : entries_) e.dot = e.self = e.others = 0;
}

AlignmentWatch::Entry& AlignmentWatch::At(int id) {
  const size_t i = static_cast<size_t>(id);
  if (i >= entries_.size()) entries_.resize(i + 1);
  return entries_[i];
}

void AlignmentWatch::Add(int id, const RobustAggregator::Alignment& a) {
  Entry& e = At(id);
  e.dot += a.dot;
  e.self += a.self;
  e.others += a.others;
}

int AlignmentWatch::EndStep(const int* ids, size_t n) {
  int worst = -1;
  for (size_t i = 0; i < n; ++i) {
    Entry& e = At(ids[i]);
    const double norms = std::sqrt(e.self * e.others);
    const double cosine = norms > 0 ? e.dot / norms : 0;
    e.cosine = e.steps == 0 ? cosine : (1 - kSmoothing) * e.cosine + kSmoothing * cosine;
    ++e.steps;
    if (e.steps >= kMinSteps && e.cosine < -kBound &&
        (worst < 0 || e.cosine < entries_[static_cast<size_t>(ids[worst])].cosine))
      worst = static_cast<int>(i);
  }
  return worst;
}

double AlignmentWatch::cosine(int id) const {
  const size_t i = static_cast<size_t>(id);
  return i < entries_.size() ? entries_[i].cosine : 0;
}

}  // namespace mt
