#include "hub/grpc/connection_gate.h"

#include <fcntl.h>
#include <grpcpp/server_builder.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace mt {
namespace {

// While refusals go on, one line about them this often.
constexpr auto kRefusalLogInterval = std::chrono::seconds(60);

// Closes with a reset: the refused peer learns at once, and the hub keeps
// no TIME_WAIT state for it.
void CloseAtOnce(int fd) {
  const linger reset{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
  close(fd);
}

}  // namespace

long RaiseOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  if (limit.rlim_cur < limit.rlim_max) {
    const rlim_t before = limit.rlim_cur;
    limit.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &limit) == 0)
      spdlog::debug("open files: soft limit raised from {} to {}", before, limit.rlim_cur);
    getrlimit(RLIMIT_NOFILE, &limit);
  }
  return limit.rlim_cur == RLIM_INFINITY ? (1L << 20) : static_cast<long>(limit.rlim_cur);
}

ConnectionGate::ConnectionGate(ListenSocket socket, ConnectionLedger& ledger)
    : socket_(socket), ledger_(ledger) {
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  spare_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (wake_fd_ < 0 || spare_fd_ < 0) {
    const std::string why = std::strerror(errno);
    if (wake_fd_ >= 0) close(wake_fd_);
    if (spare_fd_ >= 0) close(spare_fd_);
    socket_.Close();
    throw std::runtime_error("cannot start accepting connections: " + why);
  }
  spdlog::debug("connections: at most {} at once, {} per address without a worker",
                ledger.caps().total, ledger.caps().per_address);
}

ConnectionGate::~ConnectionGate() {
  stopping_ = true;
  const uint64_t one = 1;
  if (write(wake_fd_, &one, sizeof(one)) < 0) {
    // The loop also checks stopping_ at its next wake-up.
  }
  if (thread_.joinable()) thread_.join();
  if (refusals_.since_logged > 0) spdlog::warn("connections: refused {} in all", refusals_.total);
  close(wake_fd_);
  if (spare_fd_ >= 0) close(spare_fd_);
  socket_.Close();
}

void ConnectionGate::Start(grpc::experimental::ExternalConnectionAcceptor* acceptor) {
  acceptor_ = acceptor;
  thread_ = std::thread([this] { AcceptLoop(); });
}

void ConnectionGate::AcceptLoop() {
  std::vector<pollfd> fds;
  for (int fd : socket_.fds) fds.push_back({fd, POLLIN, 0});
  fds.push_back({wake_fd_, POLLIN, 0});
  while (!stopping_) {
    // The timeout only bounds how long a stop could go unseen.
    if (poll(fds.data(), fds.size(), 1000) < 0 && errno != EINTR) {
      spdlog::error("connections: poll failed: {}", std::strerror(errno));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    for (int fd : socket_.fds)
      while (!stopping_ && AcceptOne(fd)) {
      }
  }
}

bool ConnectionGate::AcceptOne(int listen_fd) {
  std::string address;
  int port = 0;
  const int fd = AcceptPeer(listen_fd, address, &port);
  if (fd < 0) {
    switch (errno) {
      case EINTR:
      case ECONNABORTED: return true;
      case EMFILE:
      case ENFILE: RefuseWithSpare(listen_fd); return true;
      case ENOBUFS:
      case ENOMEM:
        // Out of kernel memory: give it a moment rather than spin.
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        return false;
      default: return false;  // EAGAIN: nothing more waiting
    }
  }
  const std::string why = ledger_.Admit(fd, address, ConnectionLedger::Clock::now(), port);
  if (!why.empty()) {
    Refuse(fd, address, why);
    return true;
  }
  grpc::experimental::ExternalConnectionAcceptor::NewConnectionParameters p;
  p.listener_fd = listen_fd;
  p.fd = fd;
  acceptor_->HandleNewConnection(&p);  // gRPC owns fd from here on
  return true;
}

void ConnectionGate::RefuseWithSpare(int listen_fd) {
  if (spare_fd_ >= 0) {
    close(spare_fd_);
    spare_fd_ = -1;
  }
  const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd >= 0) Refuse(fd, "?", "the open-file limit");
  spare_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
  // Still none free: let the closing connections free some first.
  if (fd < 0 || spare_fd_ < 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

void ConnectionGate::Refuse(int fd, const std::string& address, const std::string& why) {
  CloseAtOnce(fd);
  RefusalLog& r = refusals_;
  ++r.total;
  ++r.since_logged;
  r.last_address = address;
  r.last_why = why;
  const auto now = ConnectionLedger::Clock::now();
  if (now < r.next_line) return;
  if (r.total == r.since_logged)
    spdlog::warn(
        "connections: refusing a connection from {} over {} ({} open, {} from that address); "
        "further refusals are counted, one line a minute",
        address, why, ledger_.open(), ledger_.open_from(address));
  else
    spdlog::warn("connections: refused {} in the last minute, {} in all (the last from {} over {})",
                 r.since_logged, r.total, r.last_address, r.last_why);
  r.since_logged = 0;
  r.next_line = now + kRefusalLogInterval;
}

}  // namespace mt
