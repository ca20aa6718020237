// The connections the hub has handed to gRPC, counted per peer address, so
// that one address cannot take every file descriptor the hub has: beyond a
// cap in all and a smaller one per address, new connections are refused.
// gRPC closes a connection without telling; a socket's identity (device and
// inode) tells whether the descriptor it was handed on still holds it, so
// the ledger forgets connections that are gone when it next needs room.
//
// The per-address cap counts only connections that hold no worker: a
// flood of idle channels (1,000 Hello-less streams and 2,000 Joins from
// one address) once filled it, and honest workers on that address failed
// their TLS handshake until the run trained 0 steps (issue 45). A
// connection on which a Join or a Hello succeeded (Mark, from the service)
// leaves the count: Joins per address are the membership's to bound
// (hub/membership/peer_limits.h). And when an address is at its cap, the
// newcomer replaces, rather than yields to, the oldest of its connections
// that carried calls but no worker, or else one still silent past
// kPendingGrace: those are cut (shutdown), so what is idle goes first.
//
// Thread-safe: the accept loop admits, the service's threads mark.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <mutex>
#include <string>
#include <unordered_map>

namespace mt {

struct ConnectionCaps {
  int total = 0;        // connections open at once
  int per_address = 0;  // of them from one peer address, not counting those holding a worker
};

// Caps that leave room under `open_file_limit` for the hub's own files and
// the dashboard, and let one address hold about as many connections as the
// run admits workers (a whole local cluster shares 127.0.0.1) but never
// half of the total.
ConnectionCaps CapsFor(long open_file_limit, int max_workers);

// The address (as PeerAddress writes it: an IPv4-mapped IPv6 peer as IPv4)
// and port of a gRPC peer string ("ipv4:10.0.0.5:43122",
// "ipv6:[::1]:5000"); false for anything else.
bool ParseGrpcPeer(const std::string& peer, std::string* address, int* port);

class ConnectionLedger {
 public:
  using Clock = std::chrono::steady_clock;
  // What a connection has carried so far.
  enum class Stage { kSilent, kCalls, kWorker };
  // A connection that has carried no call this long may be cut for a
  // newcomer from its address: a TLS handshake and a Join take a few round
  // trips.
  static constexpr std::chrono::seconds kPendingGrace{2};

  explicit ConnectionLedger(ConnectionCaps caps) : caps_(caps) {}

  // Records the connection on `fd` from `address` (`port`: the peer's; 0
  // when unknown, and it can never be marked) and returns "" when the caps
  // allow it, cutting an idle connection of that address to make room if
  // need be; otherwise records nothing and says which cap it meets.
  std::string Admit(int fd, const std::string& address, Clock::time_point now, int port = 0);
  // A call arrived on the connection from `address`:`port` (kCalls), or a
  // Join or Hello on it succeeded (kWorker). A stage never goes back.
  void Mark(const std::string& address, int port, Stage stage);

  int open() const;
  // Connections from `address` that hold no worker (what its cap counts).
  int open_from(const std::string& address) const;
  int cut() const;  // connections cut to make room, in all
  const ConnectionCaps& caps() const { return caps_; }

 private:
  struct Entry {
    dev_t dev = 0;
    ino_t ino = 0;
    std::string address;
    int port = 0;
    Clock::time_point accepted;
    Stage stage = Stage::kSilent;
  };
  using Entries = std::unordered_map<int, Entry>;
  // Forgets the connections whose descriptor no longer holds their socket.
  void Sweep();
  // Whether `fd` still holds the socket `e` was recorded for.
  static bool Holds(int fd, const Entry& e);
  void Forget(Entries::iterator it);
  // Cuts the idlest connection of `address` that may go; false if none may.
  bool CutIdle(const std::string& address, Clock::time_point now);
  std::string Over(const std::string& address) const;
  static std::string KeyOf(const std::string& address, int port);

  ConnectionCaps caps_;
  mutable std::mutex mu_;
  Entries by_fd_;
  std::unordered_map<std::string, int> per_address_;  // entries below kWorker
  std::unordered_map<std::string, int> by_peer_;      // KeyOf -> fd, for Mark
  Clock::time_point last_sweep_{};
  int cut_ = 0;
};

// ledger->Mark for the connection of a gRPC peer string; nothing when the
// ledger is null or the string is not an IP peer.
void MarkGrpcPeer(ConnectionLedger* ledger, const std::string& peer, ConnectionLedger::Stage stage);

}  // namespace mt
