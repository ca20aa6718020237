// Which open connection a new one replaces when the dashboard's server is
// full (ServerLimits): none while there is room; the stalest of the new
// peer's own once that address holds its share; else the stalest of all.
// Stalest: silent (not a byte either way since it was accepted) before one
// that spoke, then of the address holding the most connections (a flood
// from 32 addresses otherwise closed an authorised GET's connection before
// its TLS hello arrived, 1 GET in 40 on a busy machine), then the longest
// without a byte read or written. A
// connection in the middle of an answer is never the one: under a flood of
// evictions an authorised GET lost its connection mid-request before
// (14-38% of them from 16-128 flooding addresses, issue 45), since progress
// was counted from the accept until an answer completed. So idle
// keep-alives, slowloris heads and silent sockets go first, one address
// flooding the table churns its own connections, and when every candidate
// is mid-answer the newcomer is refused instead.
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
  bool spoke = false;
};

// ConnectionToEvict's answer when the table is full and every candidate is
// answering: close the new connection instead.
constexpr int kRefuseNewConnection = -2;

// The index in `open` to close for a new connection from `address`, -1 when
// there is room, or kRefuseNewConnection.
int ConnectionToEvict(const std::vector<ConnectionView>& open, std::string_view address,
                      size_t max_connections, size_t per_address);

}  // namespace mt::http
