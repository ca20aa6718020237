#include "hub/grpc/connection_ledger.h"

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

int ConnectionLedger::open_from(const std::string& address) const {
  const auto it = per_address_.find(address);
  return it == per_address_.end() ? 0 : it->second;
}

std::string ConnectionLedger::Admit(int fd, const std::string& address, Clock::time_point now) {
  // The descriptor is new: whatever it held before was closed.
  if (const auto old = by_fd_.find(fd); old != by_fd_.end()) Forget(old);
  auto over = [&]() -> std::string {
    if (open() >= caps_.total) return "the hub's cap of " + std::to_string(caps_.total);
    if (open_from(address) >= caps_.per_address)
      return "the cap of " + std::to_string(caps_.per_address) + " per address";
    return "";
  };
  if (!over().empty() && now - last_sweep_ >= kSweepInterval) {
    Sweep();
    last_sweep_ = now;
  }
  if (std::string why = over(); !why.empty()) return why;
  struct stat st {};
  if (fstat(fd, &st) != 0) return "the connection closed at once";
  by_fd_[fd] = Entry{st.st_dev, st.st_ino, address};
  ++per_address_[address];
  return "";
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

void ConnectionLedger::Forget(std::unordered_map<int, Entry>::iterator it) {
  const auto count = per_address_.find(it->second.address);
  if (count != per_address_.end() && --count->second <= 0) per_address_.erase(count);
  by_fd_.erase(it);
}

}  // namespace mt
