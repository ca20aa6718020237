// What a watch keeps of a lineage (hub/membership/lineages.h: the sessions
// of one client certificate or one address) beyond any one session: the
// most suspicious state any of its sessions reached, so that a worker that
// Leaves and Joins again is judged on where it left off, not afresh. Pure:
// keyed by small lineage numbers, no clocks.
#pragma once

#include <cstddef>
#include <vector>

namespace mt {

template <class State>
class LineageRecords {
 public:
  // The record of `lineage` (-1: none), or nullptr when none is kept.
  const State* Find(int lineage) const {
    if (lineage < 0 || static_cast<size_t>(lineage) >= records_.size()) return nullptr;
    const Record& r = records_[static_cast<size_t>(lineage)];
    return r.kept ? &r.state : nullptr;
  }
  // Worker `owner` of `lineage` stands at `state`: kept when the lineage
  // has no record yet or `state` is `worse` than it; and when the record is
  // the owner's own and `may_lower` (the owner carries the record on, not
  // just a record it took over: an honest session behind an attacker's
  // address must not wash the attacker's record out, nor may an attacker's
  // second, honest-looking client). Allocates only for a lineage never seen
  // before (and as State's own assignment does).
  template <class Worse>
  void Offer(int lineage, int owner, const State& state, Worse worse, bool may_lower) {
    if (lineage < 0) return;
    const size_t i = static_cast<size_t>(lineage);
    if (i >= records_.size()) records_.resize(i + 1);
    Record& r = records_[i];
    if (r.kept && !worse(state, r.state) && !(r.owner == owner && may_lower)) return;
    r.state = state;
    r.owner = owner;
    r.kept = true;
  }

 private:
  struct Record {
    State state;
    int owner = -1;  // the worker whose state it is
    bool kept = false;
  };
  std::vector<Record> records_;  // index = lineage
};

}  // namespace mt
