#include "hub/http/connection_table.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include "hub/http/connection_limits.h"

namespace mt::http {
namespace {

// How many silent choices with bytes already waiting one MakeRoom passes
// over before it closes the next anyway (a flood cannot make it look forever).
constexpr int kRecheckVictims = 8;

// When a byte last crossed `fd` either way, by the kernel's count: what
// libmicrohttpd read or wrote, TLS records and handshake included.
Clock::time_point LastByte(int fd, Clock::time_point now) {
  tcp_info info{};
  socklen_t size = sizeof info;
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &size) != 0) return now;
  const uint32_t idle_ms = std::min(info.tcpi_last_data_recv, info.tcpi_last_data_sent);
  return now - std::chrono::milliseconds(idle_ms);
}

bool HasInput(int fd) {
  char byte = 0;
  return recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

}  // namespace

ConnectionTable::~ConnectionTable() {
  for (auto& [id, e] : entries_)
    if (!e.handed_over) close(e.fd);
}

ConnectionTable::Room ConnectionTable::MakeRoom(const std::string& address, Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::map<uint64_t, Entry>::iterator> at;
  std::vector<ConnectionView> views;
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    const Entry& e = it->second;
    at.push_back(it);
    views.push_back(
        {e.address, e.handed_over ? LastByte(e.fd, now) : e.since, e.answering, e.handed_over});
  }
  for (int looked = 0;; ++looked) {
    const int victim =
        ConnectionToEvict(views, address, limits_.max_connections, limits_.per_address);
    if (victim == kRefuseNewConnection) return Room::kFull;
    if (victim < 0) return Room::kFree;
    const auto v = static_cast<size_t>(victim);
    // Silent so far, but its first bytes may have come since the front
    // door last looked (a client's TLS hello right after the accept): a
    // request starting, not an idle socket. The front door hands it over.
    if (!views[v].spoke && looked < kRecheckVictims && HasInput(at[v]->second.fd)) {
      views[v].spoke = true;
      views[v].last_progress = now;
      continue;
    }
    Drop(at[v]);
    return Room::kMade;
  }
}

uint64_t ConnectionTable::Add(int fd, std::string address, Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t id = next_id_++;
  Entry& e = entries_[id];
  e.fd = fd;
  e.address = std::move(address);
  e.since = now;
  return id;
}

void ConnectionTable::Waiting(std::vector<std::pair<uint64_t, int>>& out) {
  std::lock_guard<std::mutex> lock(mu_);
  out.clear();
  for (const auto& [id, e] : entries_)
    if (!e.handed_over) out.emplace_back(id, e.fd);
}

void ConnectionTable::HandOver(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = entries_.find(id);
  if (it != entries_.end()) it->second.handed_over = true;
}

void ConnectionTable::Remove(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = entries_.find(id);
  if (it == entries_.end()) return;
  if (!it->second.handed_over) close(it->second.fd);
  entries_.erase(it);
}

size_t ConnectionTable::Expire(Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  size_t expired = 0;
  for (auto it = entries_.begin(); it != entries_.end();) {
    const auto next = std::next(it);
    if (!it->second.answering && now - it->second.since >= limits_.head) {
      Drop(it);
      ++expired;
    }
    it = next;
  }
  return expired;
}

uint64_t ConnectionTable::Attach(int fd) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [id, e] : entries_)
    if (e.fd == fd && e.handed_over && !e.attached) {
      e.attached = true;
      return id;
    }
  return 0;
}

void ConnectionTable::Answering(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = entries_.find(id);
  if (it != entries_.end()) it->second.answering = true;
}

void ConnectionTable::Answered(uint64_t id, Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = entries_.find(id);
  if (it == entries_.end()) return;
  it->second.answering = false;
  it->second.since = now;
}

size_t ConnectionTable::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

void ConnectionTable::Drop(std::map<uint64_t, Entry>::iterator it) {
  // libmicrohttpd's socket stays open until it tells Remove: shut down,
  // its next read ends the connection. One handed over but not yet
  // attached may already be closed (libmicrohttpd refused it in its own
  // thread without a word): forgotten, never touched.
  if (!it->second.handed_over)
    close(it->second.fd);
  else if (it->second.attached)
    shutdown(it->second.fd, SHUT_RDWR);
  entries_.erase(it);
}

}  // namespace mt::http
