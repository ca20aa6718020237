// The dashboard's connections as the limits libmicrohttpd cannot express
// see them (docs/security.md, "The dashboard"): one table, shared by the
// front door's thread (front_door.h: accepts, first bytes, deadlines) and
// libmicrohttpd's (mhd_daemon.h: a request being answered, a connection
// gone). Waiting: accepted, not a byte yet, the front door's own socket.
// Handed over: it spoke, libmicrohttpd holds it. Which one a newcomer
// replaces when the table is full is connection_limits.h's choice: silent
// sockets first, then the longest without a byte either way (the
// kernel's count, TCP_INFO, so a TLS handshake is progress too), never one
// being answered. Evicting or expiring one that libmicrohttpd holds shuts
// its socket down, and libmicrohttpd closes it at its next turn.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace mt::http {

using Clock = std::chrono::steady_clock;

struct ServerLimits {
  size_t max_connections = 64;
  size_t per_address = 16;  // of max_connections
  // From the accept, or the end of the last answer, to a complete request
  // head (TLS handshake included): idle keep-alives, slow handshakes and
  // heads trickled a byte at a time end here.
  Clock::duration head = std::chrono::seconds(5);
  // Without a byte either way while an answer is written (libmicrohttpd's
  // CONNECTION_TIMEOUT, whole seconds).
  unsigned write_seconds = 10;
};

class ConnectionTable {
 public:
  explicit ConnectionTable(const ServerLimits& limits) : limits_(limits) {}
  ~ConnectionTable();  // closes the waiting sockets
  ConnectionTable(const ConnectionTable&) = delete;
  ConnectionTable& operator=(const ConnectionTable&) = delete;

  enum class Room { kFree, kMade, kFull };
  // Room for a new connection from `address`: kMade when one was closed
  // for it, kFull when every one it could replace is being answered.
  Room MakeRoom(const std::string& address, Clock::time_point now);
  // A waiting socket (owned from now on); its id.
  uint64_t Add(int fd, std::string address, Clock::time_point now);
  // The waiting sockets, by id: what the front door polls.
  void Waiting(std::vector<std::pair<uint64_t, int>>& out);
  // A waiting socket whose first bytes came: libmicrohttpd's from now on.
  void HandOver(uint64_t id);
  // Forgets one (a waiting socket is closed).
  void Remove(uint64_t id);
  // Closes what waited too long for a complete head; how many.
  size_t Expire(Clock::time_point now);

  // From libmicrohttpd's thread. The id of the handed-over socket `fd`
  // (0 when unknown), when libmicrohttpd starts serving it.
  uint64_t Attach(int fd);
  void Answering(uint64_t id);
  void Answered(uint64_t id, Clock::time_point now);

  size_t size();

 private:
  struct Entry {
    int fd = -1;
    std::string address;
    Clock::time_point since;  // accepted, or its last answer ended
    bool handed_over = false, answering = false, attached = false;
  };
  // Closes `it` (waiting) or shuts it down (handed over) and forgets it.
  void Drop(std::map<uint64_t, Entry>::iterator it);

  ServerLimits limits_;
  std::mutex mu_;
  std::map<uint64_t, Entry> entries_;
  uint64_t next_id_ = 1;
};

}  // namespace mt::http
