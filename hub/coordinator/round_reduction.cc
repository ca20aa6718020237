// The reduction as segments arrive, and its verdicts acted on.
#include "hub/coordinator/round_reduction.h"

#include <algorithm>

#include "core/util/process_stats.h"
#include "hub/aggregation/fednova.h"
#include "hub/aggregation/sketch_seed.h"

namespace mt {
namespace {

std::vector<SegmentRange> Ranges(const std::vector<wire::Segment>& segments) {
  std::vector<SegmentRange> out;
  for (const wire::Segment& s : segments) out.push_back({s.begin, s.end});
  return out;
}

AggregatorOptions AggregationOf(const HubConfig& config) {
  AggregatorOptions options;
  options.mode = config.aggregate;
  options.clip_factor = config.clip_factor;
  // Where the workers' data differ by design, honest residuals keep their
  // classes' direction and honest contributions point apart. The
  // persistence watch stays on: its rule is relative to the other workers
  // (3 times their median), which honest workers keeping their own classes
  // did not approach (at most 1.44, Dirichlet 0.1 and 0.5). The alignment
  // watch is off there: even with data_differ (refused only 0.2 below the
  // workers' median cosine) it refused an honest worker of three
  // (Dirichlet 0.5, seed 3: -0.47 against -0.25 and -0.27).
  const bool differ = config.data.partition.kind != PartitionSpec::Kind::kIid;
  options.data_differ = differ;
  options.refuse_misaligned = !differ;
  options.sketch_seed =
      SketchSeedOf(config.sketch_seed);  // each hub its own, unless a test names it
  return options;
}

}  // namespace

RoundReduction::RoundReduction(RoundContext& round)
    : r_(round),
      reducer_(Ranges(round.master.segments()), AggregationOf(round.config)),
      dp_(round.config.dp, round.config.workers) {}

WorkerSlot* RoundReduction::InputSlot(size_t i) const {
  return r_.roster.membership().Find(reducer_.inputs()[i].id);
}

bool RoundReduction::Refuse(size_t input, const std::string& why) {
  r_.roster.Refuse(InputSlot(input), why);
  return false;
}

bool RoundReduction::ReduceReady() {
  bool refused = false;
  while (!reducer_.done()) {
    // Participants still in the step (in id order: the round is), each of
    // which must have delivered the segment.
    reducer_.ClearInputs();
    steps_.clear();
    for (auto* s : r_.round) {
      if (s->state != WorkerSlot::State::kActive) continue;
      if (s->inbox.segments_received() <= reducer_.reduced()) return refused;
      // Batch-weighted, or with a partition weighted by each share's size
      // (DataSettings::weight_by_share).
      const int64_t share = r_.config.data.weight_by_share ? r_.messages.ShareSamples(s->id) : 0;
      reducer_.AddInput({s->id, s->inbox.gradient().data(), share > 0 ? share : s->inbox.batch(),
                         s->inbox.segments_received(), s->session.lineage});
      steps_.push_back(std::max(1, s->assignment.local_steps));
    }
    if (!reducer_.Ready()) return refused;
    PerStepWeights();
    if (ReduceSegment()) {
      reducer_.Commit();
      continue;
    }
    // A contribution was refused and its worker dropped: the segment is
    // reduced again without it, unless segments of the step went out.
    refused = true;
    if (reducer_.Refused()) return refused;
  }
  return refused;
}

void RoundReduction::PerStepWeights() {
  scale_ = 1;
  if (std::all_of(steps_.begin(), steps_.end(), [&](int s) { return s == steps_.front(); }))
    return;  // equal rounds: the data weights as they are, bit for bit
  data_weights_.clear();
  for (const Contribution& c : reducer_.inputs()) data_weights_.push_back(c.batch);
  FedNovaOf(data_weights_, steps_, &fednova_);
  for (size_t i = 0; i < fednova_.weights.size(); ++i) reducer_.SetWeight(i, fednova_.weights[i]);
  scale_ = fednova_.scale;
}

bool RoundReduction::ReduceSegment() {
  const RoundState& state = r_.state;
  RunMetrics& metrics = r_.metrics;
  const size_t k = reducer_.reduced();
  const trace::ScopedSpan span(r_.spans, trace::SpanKind::kReduce, static_cast<int32_t>(k),
                               state.step);
  const double cpu = ThreadCpuSeconds();
  SegmentReducer::Verdict verdict = reducer_.Combine(r_.master.average());
  metrics.reduce_seconds += ThreadCpuSeconds() - cpu;
  if (!verdict.ok()) return Refuse(static_cast<size_t>(verdict.refused), verdict.why);
  if (scale_ != 1) {
    const SegmentRange& seg = reducer_.segment(k);
    float* combined = r_.master.average() + seg.begin;
    for (size_t j = 0; j < seg.size(); ++j) combined[j] = static_cast<float>(combined[j] * scale_);
  }
  const size_t n = reducer_.inputs().size();
  for (size_t i = 0; i < n; ++i) InputSlot(i)->stats.clipped_segments += reducer_.clipped(i);
  verdict = reducer_.CheckAlignment();
  if (reducer_.last_segment())  // for the report and the live view
    for (size_t i = 0; i < n; ++i) {
      WorkerSlot* s = InputSlot(i);
      s->alignment = reducer_.alignment(s->id);
      s->stats.persistence_peak = reducer_.persistence_peak(s->id);
    }
  if (!verdict.ok()) return Refuse(static_cast<size_t>(verdict.refused), verdict.why);
  const double cpu2 = ThreadCpuSeconds();
  if (dp_.enabled()) {
    // The noise joins before anything applies or sends the combination.
    int64_t total = 0, largest = 0;
    for (const Contribution& c : reducer_.inputs()) {
      total += c.batch;
      largest = std::max(largest, c.batch);
    }
    const SegmentRange& seg = reducer_.segment(k);
    dp_.OnCombined(r_.master.average() + seg.begin, seg.size(),
                   static_cast<double>(largest) / static_cast<double>(total), k == 0);
  }
  // The outer step overflows where the average did not when the velocity
  // holds huge changes: as a non-finite average (found by fuzzing, with
  // one worker sending FLT_MAX changes two rounds running).
  const LocalSgdSettings& outer = r_.config.local_sgd;
  if (state.local && (outer.outer_momentum > 0 || outer.outer_lr != 1) &&
      !r_.master.ApplyOuterOptimizer(k, static_cast<float>(outer.outer_lr),
                                     static_cast<float>(outer.outer_momentum)))
    return Refuse(static_cast<size_t>(reducer_.Largest()),
                  "the outer optimizer's step with its weight change is not finite (step " +
                      std::to_string(state.step + 1) + ")");
  r_.master.EncodeSegment(k, r_.exchange.compression.current());
  if (!reducer_.last_segment()) {
    // Sent now, while the workers still compute the segments below it.
    int64_t payload = 0;
    const Encoded chunk = r_.messages.Result(k, state.step, state.local ? state.steps : 0,
                                             /*last=*/false, 0, &payload);
    for (size_t i = 0; i < n; ++i) {
      WorkerSlot* s = InputSlot(i);
      if (s->Send(chunk)) {
        metrics.result_bytes_out += payload;
        s->stats.bytes_out += payload;
      }
    }
  }
  metrics.reduce_seconds += ThreadCpuSeconds() - cpu2;
  return true;
}

}  // namespace mt
