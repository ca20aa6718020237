// Which open connection a new one replaces when the dashboard's server is
// full (ServerLimits): none while there is room; the stalest of the new
// peer's own once that address holds its share; else the stalest of all.
// Stalest: not in the middle of an answer before one that is, then the
// longest without progress (an answer completed, or accepted). So idle
// keep-alives, slowloris heads and silent sockets go first, and one
// address flooding the table churns its own connections.
#pragma once

#include <chrono>
#include <cstddef>
#include <string_view>
#include <vector>

namespace mt::http {

struct ConnectionView {
  std::string_view address;
  std::chrono::steady_clock::time_point last_progress;
  bool answering = false;
};

// The index in `open` to close for a new connection from `address`, or -1.
int ConnectionToEvict(const std::vector<ConnectionView>& open, std::string_view address,
                      size_t max_connections, size_t per_address);

}  // namespace mt::http
