#include "hub/http/connection_limits.h"

namespace mt::http {
namespace {

bool Staler(const ConnectionView& a, const ConnectionView& b) {
  if (a.spoke != b.spoke) return !a.spoke;
  return a.last_progress < b.last_progress;
}

// The stalest of `open` that is not answering (of `address` only, when
// given), or kRefuseNewConnection.
int Stalest(const std::vector<ConnectionView>& open, const std::string_view* address) {
  int best = kRefuseNewConnection;
  for (size_t i = 0; i < open.size(); ++i) {
    if (open[i].answering || (address && open[i].address != *address)) continue;
    if (best < 0 || Staler(open[i], open[static_cast<size_t>(best)])) best = static_cast<int>(i);
  }
  return best;
}

}  // namespace

int ConnectionToEvict(const std::vector<ConnectionView>& open, std::string_view address,
                      size_t max_connections, size_t per_address) {
  size_t same = 0;
  for (const ConnectionView& c : open) same += c.address == address;
  if (same >= per_address) return Stalest(open, &address);
  if (open.size() >= max_connections) return Stalest(open, nullptr);
  return -1;
}

}  // namespace mt::http
