#include "hub/http/connection_limits.h"

namespace mt::http {
namespace {

bool Staler(const ConnectionView& a, const ConnectionView& b) {
  if (a.answering != b.answering) return !a.answering;
  return a.last_progress < b.last_progress;
}

// The stalest of `open` (of `address` only, when given), or -1.
int Stalest(const std::vector<ConnectionView>& open, const std::string_view* address) {
  int best = -1;
  for (size_t i = 0; i < open.size(); ++i) {
    if (address && open[i].address != *address) continue;
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
