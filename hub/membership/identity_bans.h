// Identities dropped for hostile contributions, refused for the rest of the
// run. An identity is what the transport proved about a worker: the SHA-256
// fingerprint of its mutual-TLS client certificate. Without mutual TLS there
// is none (on loopback or behind one NAT every worker has the same address),
// and nothing is banned. Timing faults and leaving ban no one: a slow phone
// is not hostile.
#pragma once

#include <cstddef>
#include <map>
#include <string>

namespace mt {

class IdentityBans {
 public:
  // Bounded: a hostile CA holder's fresh certificates cost at most this many
  // entries. Beyond it, new bans are not kept (logged once by the caller).
  static constexpr size_t kMaxBanned = 4096;

  // Bans `identity` for `why`. Returns false when there is nothing to ban
  // (no identity), it is banned already, or the list is full.
  bool Ban(const std::string& identity, const std::string& why) {
    if (identity.empty() || why_.size() >= kMaxBanned) return false;
    return why_.emplace(identity, why).second;
  }
  // Why `identity` was banned, or nullptr when it was not.
  const std::string* Why(const std::string& identity) const {
    if (identity.empty()) return nullptr;
    const auto it = why_.find(identity);
    return it == why_.end() ? nullptr : &it->second;
  }
  bool full() const { return why_.size() >= kMaxBanned; }
  size_t size() const { return why_.size(); }

 private:
  std::map<std::string, std::string> why_;  // identity -> why it was dropped
};

}  // namespace mt
