// A worker's lineage: what its sessions have in common from one Join to
// the next, so the hostile-worker watches (hub/round/persistence_watch.h,
// alignment_watch.h) can follow a worker that Leaves and Joins again
// instead of judging each new id afresh (issue 45, finding 7: a bias that
// rejoined every 25 gradients was never judged, the watch needing 30).
//
// With mutual TLS the lineage is the client certificate's fingerprint: one
// device, whatever its address. Without, it is the peer's address, which
// many honest phones behind one NAT share; the watches therefore never
// hold a lineage's record against a new session unless that session's own
// contributions continue it (see the watches). A small number per lineage,
// interned here, is what the watches key their records by.
#pragma once

#include <map>
#include <string>

namespace mt {

class Lineages {
 public:
  // Bounded: distinct addresses are a peer's to make up (IPv6). Beyond
  // this, new sessions have no lineage (-1) and are judged per session.
  static constexpr int kMaxLineages = 4096;

  // The lineage of a session with `identity` (empty without mutual TLS)
  // from `host` (the peer's address without its port); -1 when full.
  int Of(const std::string& identity, const std::string& host) {
    const std::string key = identity.empty() ? "address " + host : "certificate " + identity;
    const auto it = ids_.find(key);
    if (it != ids_.end()) return it->second;
    if (static_cast<int>(ids_.size()) >= kMaxLineages) return -1;
    const int id = static_cast<int>(ids_.size());
    ids_.emplace(key, id);
    return id;
  }
  int size() const { return static_cast<int>(ids_.size()); }

 private:
  std::map<std::string, int> ids_;
};

}  // namespace mt
