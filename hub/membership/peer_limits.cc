#include "hub/membership/peer_limits.h"

#include <algorithm>
#include <cmath>

namespace mt {

PeerLimits::Host& PeerLimits::Entry(const std::string& host, Clock::time_point now) {
  auto it = hosts_.find(host);
  if (it == hosts_.end()) {
    if (hosts_.size() >= kMaxHosts) {
      // Forget the host heard from longest ago. A flood of addresses can
      // push out a blocked host early; that only costs it its block.
      auto oldest =
          std::min_element(hosts_.begin(), hosts_.end(), [](const auto& a, const auto& b) {
            return a.second.last_seen < b.second.last_seen;
          });
      hosts_.erase(oldest);
    }
    Host h;
    h.refilled = h.window_start = h.last_seen = now;
    it = hosts_.emplace(host, h).first;
  }
  it->second.last_seen = now;
  return it->second;
}

std::string PeerLimits::AdmitJoin(const std::string& host, Clock::time_point now) {
  Host& h = Entry(host, now);
  if (now < h.blocked_until) {
    const auto left = std::chrono::duration_cast<std::chrono::seconds>(h.blocked_until - now);
    return "too many wrong tokens from " + host + "; try again in " +
           std::to_string(left.count() + 1) + " s";
  }
  h.tokens =
      std::min(kJoinBurst, h.tokens + kJoinsPerSecond *
                                          std::chrono::duration<double>(now - h.refilled).count());
  h.refilled = now;
  if (h.tokens < 1) return "too many joins from " + host + "; slow down";
  h.tokens -= 1;
  return "";
}

void PeerLimits::NoteRefusal(const std::string& host, Clock::time_point now) {
  Host& h = Entry(host, now);
  if (now - h.window_start > kRefusalWindow) {
    h.window_start = now;
    h.refusals = 0;
  }
  if (++h.refusals >= kMaxRefusals) {
    h.blocked_until = now + kBlock;
    h.refusals = 0;
    h.window_start = now;
  }
}

}  // namespace mt
