#include "hub/http/connection_limits.h"

#include <unordered_map>

namespace mt::http {
namespace {

// The stalest of `open` that is not answering (of `address` only, when
// given), or kRefuseNewConnection: silent before spoke, then (across
// addresses) of the address holding the most, then the longest without a
// byte. `held`: each connection's address's count.
int Stalest(const std::vector<ConnectionView>& open, const std::string_view* address,
            const std::vector<size_t>& held) {
  auto staler = [&](size_t a, size_t b) {
    if (open[a].spoke != open[b].spoke) return !open[a].spoke;
    if (held[a] != held[b]) return held[a] > held[b];
    return open[a].last_progress < open[b].last_progress;
  };
  int best = kRefuseNewConnection;
  for (size_t i = 0; i < open.size(); ++i) {
    if (open[i].answering || (address && open[i].address != *address)) continue;
    if (best < 0 || staler(i, static_cast<size_t>(best))) best = static_cast<int>(i);
  }
  return best;
}

}  // namespace

int ConnectionToEvict(const std::vector<ConnectionView>& open, std::string_view address,
                      size_t max_connections, size_t per_address) {
  size_t same = 0;
  for (const ConnectionView& c : open) same += c.address == address;
  if (same < per_address && open.size() < max_connections) return -1;
  std::unordered_map<std::string_view, size_t> per;
  for (const ConnectionView& c : open) ++per[c.address];
  std::vector<size_t> held;
  held.reserve(open.size());
  for (const ConnectionView& c : open) held.push_back(per[c.address]);
  return Stalest(open, same >= per_address ? &address : nullptr, held);
}

}  // namespace mt::http
