#include "hub/round/segment_reducer.h"

#include <cstdio>

namespace mt {

SegmentReducer::SegmentReducer(std::vector<SegmentRange> segments, AggregatorOptions options)
    : segments_(std::move(segments)), aggregator_(options), norms_(segments_.size()) {}

void SegmentReducer::Begin(int64_t step, bool local, size_t participants) {
  step_ = step;
  local_ = local;
  reduced_ = 0;
  step_refused_ = false;
  alignment_.BeginStep();
  persistence_.BeginStep();
  inputs_.reserve(participants);
  values_.reserve(participants);
  weights_.reserve(participants);
  usual_.reserve(participants);
  ids_.reserve(participants);
}

bool SegmentReducer::Ready() const {
  if (done() || step_refused_ || inputs_.empty()) return false;
  for (const Contribution& c : inputs_)
    if (c.segments_in <= reduced_) return false;
  return true;
}

SegmentReducer::Verdict SegmentReducer::Combine(float* out) {
  const SegmentRange seg = segments_[reduced_];
  // Batch weights: each contribution is the mean over its batch, so
  // sum(b_i / B * g_i), B = sum(b_i), is the mean over all samples.
  int64_t samples = 0;
  for (const Contribution& c : inputs_) samples += c.batch;
  values_.clear();
  weights_.clear();
  usual_.clear();
  for (const Contribution& c : inputs_) {
    values_.push_back(c.values + seg.begin);
    weights_.push_back(static_cast<float>(c.batch) / static_cast<float>(samples));
    usual_.push_back(norms_.usual(c.id, reduced_));
  }
  const RobustAggregator::Outcome o =
      aggregator_.Aggregate(values_.data(), weights_.data(), inputs_.size(), seg.size(),
                            out + seg.begin, seg.begin, usual_.data());
  Verdict v;
  if (o.refused >= 0) {
    char why[160];
    std::snprintf(why, sizeof why,
                  "its %s for step %lld is %.3g times the median norm of the step's (segment at "
                  "%zu; at most %.0f)",
                  ContributionName(), static_cast<long long>(step_ + 1), o.ratio, seg.begin,
                  aggregator_.options().refuse_factor);
    v.refused = o.refused;
    v.why = why;
  } else if (!o.finite) {
    // Finite inputs whose combination is not: blame the largest.
    v.refused = Largest();
    v.why = "the step's average with its contribution is not finite (step " +
            std::to_string(step_ + 1) + ")";
  } else {
    for (size_t i = 0; i < inputs_.size(); ++i)
      norms_.Observe(inputs_[i].id, reduced_, aggregator_.norm(i));
  }
  return v;
}

SegmentReducer::Verdict SegmentReducer::CheckAlignment() {
  Verdict v;
  if (aggregator_.options().mode != Aggregation::kAuto || inputs_.size() < 3) return v;
  const bool aligning = aggregator_.options().refuse_misaligned;
  const bool sketched = aggregator_.sketched();
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const Contribution& c = inputs_[i];
    if (aligning) alignment_.Add(c.id, aggregator_.alignment(i), c.lineage);
    if (sketched)
      persistence_.Add(c.id, aggregator_.sketch(i), aggregator_.residual_energy(i), c.lineage);
  }
  if (!last_segment()) return v;
  ids_.clear();
  for (const Contribution& c : inputs_) ids_.push_back(c.id);
  if (aligning) {
    const bool differ = aggregator_.options().data_differ;
    const int worst =
        alignment_.EndStep(ids_.data(), ids_.size(), differ ? AlignmentWatch::kSpread : 0);
    if (worst >= 0) {
      const int id = inputs_[static_cast<size_t>(worst)].id;
      char apart[80] = "";
      if (differ)
        std::snprintf(apart, sizeof apart,
                      " and %.2f below the workers' median, their data differing",
                      AlignmentWatch::kSpread);
      char why[320];
      std::snprintf(why, sizeof why,
                    "its %ss point against the other workers' (mean cosine %.2f over its last "
                    "~%d steps%s; refused below -%.2f%s)",
                    ContributionName(), alignment_.cosine(id),
                    static_cast<int>(1 / AlignmentWatch::kSmoothing),
                    alignment_.continues(id)
                        ? ", earlier sessions from its address or certificate included"
                        : "",
                    AlignmentWatch::kBound, apart);
      v.refused = worst;
      v.why = why;
      return v;
    }
  }
  if (!sketched) return v;
  const int worst = persistence_.EndStep(ids_.data(), ids_.size());
  if (worst < 0) return v;
  const int id = inputs_[static_cast<size_t>(worst)].id;
  char why[300];
  std::snprintf(why, sizeof why,
                "its %ss keep adding the same direction (persistence %.2f of its residual from "
                "the others' centre over its last ~%d steps%s; refused above %.2f and %.0f times "
                "the workers' median)",
                ContributionName(), persistence_.persistence(id),
                static_cast<int>(1 / PersistenceWatch::kSmoothing),
                persistence_.continues(id)
                    ? ", earlier sessions from its address or certificate included"
                    : "",
                PersistenceWatch::kBound, PersistenceWatch::kRatio);
  v.refused = worst;
  v.why = why;
  return v;
}

int SegmentReducer::Largest() const {
  size_t worst = 0;
  for (size_t i = 1; i < inputs_.size(); ++i)
    if (aggregator_.norm(i) > aggregator_.norm(worst)) worst = i;
  return static_cast<int>(worst);
}

bool SegmentReducer::Refused() {
  if (reduced_ > 0) step_refused_ = true;
  return step_refused_;
}

}  // namespace mt
