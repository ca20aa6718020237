// HubSession's rounds of local SGD (mthub --sync-every above 1): a round's
// local steps and the change it sends, the steps taken ahead with
// --overlap, and what a state or a round left out discards.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/trace/span.h"
#include "core/train/local_sgd.h"
#include "core/util/digest.h"
#include "core/util/seconds.h"
#include "kernels/cpu/cpu_backend.h"
#include "worker/hub_session.h"
#include "worker/worker_trace.h"

namespace mt {

void HubSession::ComputeRound(const proto::Assignment& a) {
  const int b = a.batch();
  const int h = a.local_steps();
  const auto t0 = Clock::now();
  Model& model = trainer_.model();
  const size_t p = model.ParamCount();
  float* w = kernels::CpuBackend::Data(model.params());
  round_start_.resize(p);  // once: the size never changes
  // After a state (or at the start) the weights are the anchor; after a
  // result they may be ahead of it.
  if (!anchored_) std::copy(w, w + p, round_start_.begin());
  anchored_ = false;
  const bool digest = join_.digest_every() > 0 && a.step() % join_.digest_every() == 0;
  const uint64_t weights_digest = digest ? DigestFloats(round_start_.data(), p) : 0;
  // Steps taken ahead are this round's first (on its samples when its
  // plan matched the last one's); more than h when the plan got shorter.
  const int first = std::min(round_ahead_, h);
  const int taken = std::max(round_ahead_, h);
  double loss = ahead_loss_;
  const double ahead_seconds = ahead_seconds_;
  round_ahead_ = 0;
  ahead_seconds_ = ahead_loss_ = 0;
  for (int k = first; k < h; ++k) {
    const trace::ScopedSpan span(trace_, trace::SpanKind::kLocalStep, k, a.step() + k);
    loss += Step(a, k, StepMode::kLocal);
  }
  // The change over the round travels where a gradient would.
  float* change = kernels::CpuBackend::Data(model.grads());
  local_sgd::RoundChange(w, round_start_.data(), p, change);
  if (join_.drift_correction()) {
    // Kept for the drift's update when the average comes (the gradient
    // buffer holds the next steps' gradients by then).
    own_change_.assign(change, change + p);  // reserved: no allocation
    own_steps_ = taken;
  }
  // Compute is the steps' time, those ahead included; not the wait for
  // the plan.
  const double ms = 1e3 * (ahead_seconds + Seconds(Clock::now() - t0));
  totals_.compute_seconds += ms / 1e3;
  totals_.samples += static_cast<int64_t>(b) * taken;
  totals_.steps += taken;
  steps_ += taken;
  MakePrivate(change);
  sender_.Begin(a.step(), change);
  FinishGradient(b * h, loss, ms, digest, weights_digest);  // all the round's samples
  RecordHistory(a.step() + h, taken, b, b * taken, loss, ms);
  if (join_.overlap_rounds()) {
    sent_weights_.resize(p);  // once
    std::copy(w, w + p, sent_weights_.begin());
    ahead_of_ = a;
    lookahead_.Start(h);
  }
  const auto now = Clock::now();
  if (Seconds(now - last_log_) >= cfg_.log_every_seconds) {
    spdlog::info("steps {}-{} epoch {} batch {} loss {:.4f} compute {:.1f} ms", a.step() + 1,
                 a.step() + h, a.epoch() + 1, b, loss / (static_cast<double>(b) * taken), ms);
    last_log_ = now;
  }
}

void HubSession::StepAhead(int k) {
  const proto::Assignment& a = ahead_of_;
  const trace::ScopedTrack row(trace::kTrackLookahead);
  const trace::ScopedSpan span(trace_, trace::SpanKind::kLocalStep, a.local_steps() + k,
                               a.step() + a.local_steps() + k);
  const auto t0 = Clock::now();
  // Counted from the last round's start: its plan's positions go on.
  ahead_loss_ += Step(a, a.local_steps() + k, StepMode::kAhead);
  ahead_seconds_ += Seconds(Clock::now() - t0);
}

void HubSession::DiscardAhead() {
  ahead_steps_ = round_ahead_ = 0;
  ahead_seconds_ = ahead_loss_ = 0;
  anchored_ = false;
  // A state or a round left out: this worker's history with the group's
  // averages is broken, so its correction starts again from none.
  std::fill(drift_.begin(), drift_.end(), 0.0f);
  own_change_.clear();
}

}  // namespace mt
