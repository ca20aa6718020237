#include "hub/policy/attendance.h"

#include <algorithm>

namespace mt {

namespace {

std::vector<Attendance::Member> Without(const std::vector<Attendance::Member>& members,
                                        size_t skip) {
  std::vector<Attendance::Member> out;
  out.reserve(members.size());
  for (size_t i = 0; i < members.size(); ++i)
    if (i != skip) out.push_back(members[i]);
  return out;
}

// Faster by more than both bounds (both predictions known).
bool Pays(double faster_ms, double than_ms) {
  return faster_ms > 0 && than_ms > 0 && faster_ms * (1 + Attendance::kMargin) < than_ms &&
         faster_ms + Attendance::kMinSavingMs < than_ms;
}

}  // namespace

bool Attendance::set_aside(int worker) const {
  auto it = workers_.find(worker);
  return it != workers_.end() && it->second.aside;
}

std::vector<Attendance::Member> Attendance::Choose(const std::vector<Member>& present,
                                                   int min_members, const Predict& predict,
                                                   Changes* changes) {
  ++rounds_;
  std::vector<Member> taking, aside;
  for (const Member& m : present) (workers_[m.worker].aside ? aside : taking).push_back(m);

  // Back: tried again after its time aside, or where it would pay now.
  for (const Member& m : aside) {
    WorkerState& w = workers_[m.worker];
    std::vector<Member> with = taking;
    with.push_back(m);
    const bool recheck = rounds_ - w.aside_at >= w.recheck;
    if (!recheck && !Pays(predict(with), predict(taking))) continue;
    w.aside = false;
    w.strikes = 0;
    if (recheck)
      changes->remeasure.push_back(m.worker);
    else
      w.recheck = kRecheckRounds;
    taking.push_back(m);
    changes->brought_back.push_back(m.worker);
  }
  std::stable_sort(taking.begin(), taking.end(),
                   [](const Member& a, const Member& b) { return a.worker < b.worker; });

  // Aside: the one whose absence shortens the round most, if it pays; not
  // in a round that brought one back (its estimates may be about to go).
  if (!changes->brought_back.empty() || static_cast<int>(taking.size()) <= std::max(1, min_members))
    return taking;
  const double all_ms = predict(taking);
  if (all_ms <= 0) return taking;
  size_t best = taking.size();
  double best_ms = all_ms;
  for (size_t i = 0; i < taking.size(); ++i) {
    const double without_ms = predict(Without(taking, i));
    if (Pays(without_ms, all_ms) && without_ms < best_ms) {
      best = i;
      best_ms = without_ms;
    }
  }
  for (size_t i = 0; i < taking.size(); ++i)
    if (i != best) workers_[taking[i].worker].strikes = 0;
  if (best == taking.size()) return taking;
  WorkerState& w = workers_[taking[best].worker];
  if (++w.strikes < kSettleRounds) return taking;
  // Proved hopeless again right after a trial: a longer wait before the next.
  if (w.aside_at > 0 && rounds_ - w.aside_at <= w.recheck + kTrialRounds)
    w.recheck = std::min(2 * w.recheck, kMaxRecheckRounds);
  w.aside = true;
  w.strikes = 0;
  w.aside_at = rounds_;
  changes->set_aside.push_back(taking[best].worker);
  taking.erase(taking.begin() + static_cast<std::ptrdiff_t>(best));
  return taking;
}

}  // namespace mt
