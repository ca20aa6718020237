#include "hub/round/alignment_watch.h"

#include <cmath>

namespace mt {

void AlignmentWatch::BeginStep() {
  for (Entry& e : entries_) e.dot = e.self = e.others = 0;
}

AlignmentWatch::Entry& AlignmentWatch::At(int id, int lineage) {
  const size_t i = static_cast<size_t>(id);
  if (i >= entries_.size()) entries_.resize(i + 1);
  Entry& e = entries_[i];
  if (!e.seen) {
    e.seen = true;
    e.lineage = lineage;
    // Where an earlier session of its lineage left off.
    if (const Trace* record = lineages_.Find(lineage); record && record->steps > 0) {
      e.line = *record;
      e.inherited = true;
    }
  }
  return e;
}

const AlignmentWatch::Entry* AlignmentWatch::Find(int id) const {
  const size_t i = static_cast<size_t>(id);
  return i < entries_.size() && entries_[i].seen ? &entries_[i] : nullptr;
}

void AlignmentWatch::Add(int id, const RobustAggregator::Alignment& a, int lineage) {
  Entry& e = At(id, lineage);
  e.dot += a.dot;
  e.self += a.self;
  e.others += a.others;
}

int AlignmentWatch::EndStep(const int* ids, size_t n, double spread) {
  if (judged_.size() < n) {
    judged_.resize(n);
    sorted_.resize(n);
  }
  for (size_t i = 0; i < n; ++i) {
    Entry& e = At(ids[i]);
    const double norms = std::sqrt(e.self * e.others);
    const double cosine = norms > 0 ? e.dot / norms : 0;
    e.own.Fold(cosine);
    e.line.Fold(cosine);
    e.own_sum += cosine;
    e.continues = e.inherited && e.own.steps >= kOwnSteps && e.own_sum / e.own.steps < -kBound;
    // The lowest cosine any session of the lineage holds is its record.
    lineages_.Offer(
        e.lineage, ids[i], e.line,
        [](const Trace& a, const Trace& b) { return a.cosine < b.cosine; },
        !e.inherited || e.continues);
    double judged = 1;
    if (e.own.steps >= kMinSteps) judged = e.own.cosine;
    if (e.continues && e.line.steps >= kMinSteps && e.line.cosine < judged) judged = e.line.cosine;
    judged_[i] = judged;
    sorted_[i] = e.own.cosine;
  }
  // Where the data differ, the others' cosines are the measure: honest
  // workers all point apart, a sign flip further than they do.
  const double below = spread > 0 ? LowerMedian(sorted_.data(), n) - spread : 0;
  int worst = -1;
  for (size_t i = 0; i < n; ++i) {
    const double judged = judged_[i];
    if (judged < -kBound && (spread <= 0 || judged < below) &&
        (worst < 0 || judged < judged_[static_cast<size_t>(worst)]))
      worst = static_cast<int>(i);
  }
  return worst;
}

double AlignmentWatch::cosine(int id) const {
  const Entry* e = Find(id);
  if (!e) return 0;
  return e->continues && e->line.cosine < e->own.cosine ? e->line.cosine : e->own.cosine;
}

bool AlignmentWatch::continues(int id) const {
  const Entry* e = Find(id);
  return e && e->continues;
}

}  // namespace mt
