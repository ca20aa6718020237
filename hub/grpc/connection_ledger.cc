#include "hub/grpc/connection_ledger.h"

#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>

namespace mt {
namespace {

// Descriptors kept for what is not a worker's connection: the dataset,
// checkpoints, logs, gRPC's own pipes and the dashboard's connections.
constexpr long kReservedFiles = 128;
// A sweep walks every connection; under a flood of refusals it runs at most
// this often (refusing a little early meanwhile is harmless).
constexpr auto kSweepInterval = std::chrono::milliseconds(50);

}  // namespace

ConnectionCaps CapsFor(long open_file_limit, int max_workers) {
  const long room = open_file_limit - kReservedFiles - open_file_limit / 16;
  ConnectionCaps caps;
  caps.total = static_cast<int>(std::clamp<long>(room, 8, 1 << 20));
  // Each worker holds one connection, two while it reconnects.
  const long wanted = std::max<long>(64, 2L * max_workers);
  caps.per_address = static_cast<int>(std::clamp<long>(wanted, 4, caps.total / 2));
  return caps;
}

bool ParseGrpcPeer(const std::string& peer, std::string* address, int* port) {
  std::string host, rest;
  if (peer.rfind("ipv4:", 0) == 0) {
    const size_t colon = peer.rfind(':');
    if (colon <= 5) return false;
    host = peer.substr(5, colon - 5);
    rest = peer.substr(colon + 1);
  } else if (peer.rfind("ipv6:[", 0) == 0) {
    const size_t close = peer.find("]:", 6);
    if (close == std::string::npos) return false;
    host = peer.substr(6, close - 6);
    rest = peer.substr(close + 2);
    // An IPv4 peer of a dual-stack socket, as PeerAddress writes it.
    if (host.rfind("::ffff:", 0) == 0 && host.find('.') != std::string::npos) host = host.substr(7);
  } else {
    return false;
  }
  if (host.empty() || rest.empty() || rest.size() > 5 ||
      !std::all_of(rest.begin(), rest.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  *address = host;
  *port = std::stoi(rest);
  return *port > 0 && *port < 65536;
}

void MarkGrpcPeer(ConnectionLedger* ledger, const std::string& peer,
                  ConnectionLedger::Stage stage) {
  std::string address;
  int port = 0;
  if (ledger && ParseGrpcPeer(peer, &address, &port)) ledger->Mark(address, port, stage);
}

std::string ConnectionLedger::KeyOf(const std::string& address, int port) {
  return address + "#" + std::to_string(port);
}

int ConnectionLedger::open() const {
  const std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(by_fd_.size());
}

int ConnectionLedger::open_from(const std::string& address) const {
  const std::lock_guard<std::mutex> lock(mu_);
  const auto it = per_address_.find(address);
  return it == per_address_.end() ? 0 : it->second;
}

int ConnectionLedger::cut() const {
  const std::lock_guard<std::mutex> lock(mu_);
  return cut_;
}

std::string ConnectionLedger::Over(const std::string& address) const {
  if (static_cast<int>(by_fd_.size()) >= caps_.total)
    return "the hub's cap of " + std::to_string(caps_.total);
  const auto it = per_address_.find(address);
  if (it != per_address_.end() && it->second >= caps_.per_address)
    return "the cap of " + std::to_string(caps_.per_address) + " per address";
  return "";
}

std::string ConnectionLedger::Admit(int fd, const std::string& address, Clock::time_point now,
                                    int port) {
  const std::lock_guard<std::mutex> lock(mu_);
  // The descriptor is new: whatever it held before was closed.
  if (const auto old = by_fd_.find(fd); old != by_fd_.end()) Forget(old);
  if (!Over(address).empty() && now - last_sweep_ >= kSweepInterval) {
    Sweep();
    last_sweep_ = now;
  }
  std::string why = Over(address);
  // At the address's cap, not the hub's: an idle one of its own makes room.
  if (!why.empty() && static_cast<int>(by_fd_.size()) < caps_.total && CutIdle(address, now))
    why = Over(address);
  if (!why.empty()) return why;
  struct stat st {};
  if (fstat(fd, &st) != 0) return "the connection closed at once";
  by_fd_[fd] = Entry{st.st_dev, st.st_ino, address, port, now, Stage::kSilent};
  ++per_address_[address];
  if (port > 0) by_peer_[KeyOf(address, port)] = fd;
  return "";
}

void ConnectionLedger::Mark(const std::string& address, int port, Stage stage) {
  const std::lock_guard<std::mutex> lock(mu_);
  const auto peer = by_peer_.find(KeyOf(address, port));
  if (peer == by_peer_.end()) return;
  const auto it = by_fd_.find(peer->second);
  if (it == by_fd_.end() || !Holds(it->first, it->second) || it->second.stage >= stage) return;
  if (stage == Stage::kWorker) {
    const auto count = per_address_.find(address);
    if (count != per_address_.end() && --count->second <= 0) per_address_.erase(count);
  }
  it->second.stage = stage;
}

bool ConnectionLedger::CutIdle(const std::string& address, Clock::time_point now) {
  // The oldest that carried calls but holds no worker, else the oldest
  // silent one past its grace.
  auto victim = by_fd_.end();
  auto rank = [&](const Entry& e) { return e.stage == Stage::kCalls ? 0 : 1; };
  for (auto it = by_fd_.begin(); it != by_fd_.end(); ++it) {
    const Entry& e = it->second;
    if (e.address != address || e.stage == Stage::kWorker) continue;
    if (e.stage == Stage::kSilent && now - e.accepted < kPendingGrace) continue;
    if (victim == by_fd_.end() || rank(e) < rank(victim->second) ||
        (rank(e) == rank(victim->second) && e.accepted < victim->second.accepted))
      victim = it;
  }
  if (victim == by_fd_.end()) return false;
  // gRPC owns the descriptor and closes it when it sees the end; checked
  // just before, so a descriptor handed out again is left alone.
  if (Holds(victim->first, victim->second)) {
    shutdown(victim->first, SHUT_RDWR);
    ++cut_;
  }
  Forget(victim);
  return true;
}

bool ConnectionLedger::Holds(int fd, const Entry& e) {
  struct stat st {};
  return fstat(fd, &st) == 0 && st.st_dev == e.dev && st.st_ino == e.ino;
}

void ConnectionLedger::Sweep() {
  for (auto it = by_fd_.begin(); it != by_fd_.end();) {
    if (Holds(it->first, it->second)) {
      ++it;
    } else {
      auto gone = it++;
      Forget(gone);
    }
  }
}

void ConnectionLedger::Forget(Entries::iterator it) {
  const Entry& e = it->second;
  if (e.stage != Stage::kWorker) {
    const auto count = per_address_.find(e.address);
    if (count != per_address_.end() && --count->second <= 0) per_address_.erase(count);
  }
  if (e.port > 0) {
    const auto peer = by_peer_.find(KeyOf(e.address, e.port));
    if (peer != by_peer_.end() && peer->second == it->first) by_peer_.erase(peer);
  }
  by_fd_.erase(it);
}

}  // namespace mt
