// The connections the hub has handed to gRPC, counted per peer address, so
// that one address cannot take every file descriptor the hub has: beyond a
// cap in all and a smaller one per address, new connections are refused.
// gRPC closes a connection without telling; a socket's identity (device and
// inode) tells whether the descriptor it was handed on still holds it, so
// the ledger forgets connections that are gone when it next needs room.
// Not thread-safe: the accept loop alone uses it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <unordered_map>

namespace mt {

struct ConnectionCaps {
  int total = 0;        // connections open at once
  int per_address = 0;  // of them from one peer address
};

// Caps that leave room under `open_file_limit` for the hub's own files and
// the dashboard, and let one address hold about as many connections as the
// run admits workers (a whole local cluster shares 127.0.0.1) but never
// half of the total.
ConnectionCaps CapsFor(long open_file_limit, int max_workers);

class ConnectionLedger {
 public:
  using Clock = std::chrono::steady_clock;
  explicit ConnectionLedger(ConnectionCaps caps) : caps_(caps) {}

  // Records the connection on `fd` from `address` and returns "" when the
  // caps allow it; otherwise records nothing and says which cap it meets.
  std::string Admit(int fd, const std::string& address, Clock::time_point now);

  int open() const { return static_cast<int>(by_fd_.size()); }
  int open_from(const std::string& address) const;
  const ConnectionCaps& caps() const { return caps_; }

 private:
  struct Entry {
    dev_t dev = 0;
    ino_t ino = 0;
    std::string address;
  };
  // Forgets the connections whose descriptor no longer holds their socket.
  void Sweep();
  // Whether `fd` still holds the socket `e` was recorded for.
  static bool Holds(int fd, const Entry& e);
  void Forget(std::unordered_map<int, Entry>::iterator it);

  ConnectionCaps caps_;
  std::unordered_map<int, Entry> by_fd_;
  std::unordered_map<std::string, int> per_address_;
  Clock::time_point last_sweep_{};
};

}  // namespace mt
