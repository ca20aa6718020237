// The dashboard's accept loop, in front of libmicrohttpd: the limits it
// cannot express (docs/security.md measures each). libmicrohttpd only
// refuses a connection beyond its caps, where the dashboard must stay
// reachable under a flood: here a newcomer replaces the stalest
// connection instead (connection_table.h); a socket is handed over only
// once it spoke, so silent ones never cost libmicrohttpd a thing; plain
// HTTP sent to the HTTPS port is told to use https:// (GnuTLS would close
// it without a word); and a head must be complete within a deadline from
// the accept, where libmicrohttpd's timeout restarts with every byte (a
// head trickled a byte at a time would never end). Evictions are logged
// once, then counted once a minute while they last.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

#include "hub/http/connection_table.h"
#include "hub/net/listen_socket.h"

namespace mt::http {

class FrontDoor {
 public:
  // Hands a connected socket that spoke to the HTTP server (owned by it
  // from then on, closed by it when refused): false when refused.
  using HandOver = std::function<bool(int fd)>;

  // Serves `listening` (owned from now on) on a thread of its own.
  FrontDoor(ListenSocket listening, ConnectionTable& table, HandOver hand_over, bool tls,
            const ServerLimits& limits);
  ~FrontDoor();  // joins the thread, closes the listening sockets
  FrontDoor(const FrontDoor&) = delete;
  FrontDoor& operator=(const FrontDoor&) = delete;

 private:
  void Run();
  // Takes what waits on `listen_fd`, making room as it must.
  void Accept(int listen_fd, Clock::time_point now);
  // A waiting socket is readable: hand it over, tell it to use HTTPS, or
  // forget it (the peer closed).
  void FirstBytes(uint64_t id, int fd);
  void LogEvictions(Clock::time_point now);

  ListenSocket listening_;
  ConnectionTable& table_;
  HandOver hand_over_;
  bool tls_;
  ServerLimits limits_;
  int wake_[2] = {-1, -1};  // a pipe: the destructor wakes poll() with it
  std::atomic<bool> stop_{false};
  std::vector<std::pair<uint64_t, int>> waiting_;
  Clock::time_point accept_paused_until_{}, last_log_{};
  uint64_t evicted_ = 0, evicted_unlogged_ = 0;
  bool eviction_logged_ = false;
  std::thread thread_;
};

}  // namespace mt::http
