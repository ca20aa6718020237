#include "hub/http/front_door.h"

#include <fcntl.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <stdexcept>
#include <string>

namespace mt::http {
namespace {

// Connections accepted per turn of the loop: a backlog of hundreds is
// taken in a few turns, and the waiting sockets are looked at in between.
constexpr int kAcceptsPerTurn = 128;
// The longest poll() sleeps: deadlines are checked at least this often.
constexpr int kTurnMs = 250;
// Out of file descriptors: stop accepting for this long rather than spin.
constexpr auto kAcceptPause = std::chrono::milliseconds(100);
constexpr auto kLogEvery = std::chrono::minutes(1);

// The answer to plain HTTP on the HTTPS port, whole.
std::string UseHttpsAnswer() {
  const std::string body = "this dashboard speaks HTTPS: open https:// instead of http://\n";
  return "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
         "Content-Length: " +
         std::to_string(body.size()) +
         "\r\nConnection: close\r\nX-Content-Type-Options: nosniff\r\n\r\n" + body;
}

}  // namespace

FrontDoor::FrontDoor(ListenSocket listening, ConnectionTable& table, HandOver hand_over, bool tls,
                     const ServerLimits& limits)
    : listening_(std::move(listening)),
      table_(table),
      hand_over_(std::move(hand_over)),
      tls_(tls),
      limits_(limits) {
  if (pipe2(wake_, O_NONBLOCK | O_CLOEXEC) != 0) {
    listening_.Close();
    throw std::runtime_error("cannot make the dashboard's wake-up pipe");
  }
  thread_ = std::thread([this] { Run(); });
}

FrontDoor::~FrontDoor() {
  stop_ = true;
  const char byte = 1;
  [[maybe_unused]] const ssize_t n = write(wake_[1], &byte, 1);
  if (thread_.joinable()) thread_.join();
  close(wake_[0]);
  close(wake_[1]);
  listening_.Close();
}

void FrontDoor::Run() {
  std::vector<pollfd> polled;
  while (!stop_) {
    const Clock::time_point now = Clock::now();
    const bool accepting = now >= accept_paused_until_;
    table_.Waiting(waiting_);
    polled.clear();
    polled.push_back({wake_[0], POLLIN, 0});
    for (int fd : listening_.fds) polled.push_back({accepting ? fd : -1, POLLIN, 0});
    for (const auto& [id, fd] : waiting_) polled.push_back({fd, POLLIN, 0});
    if (poll(polled.data(), polled.size(), kTurnMs) < 0 && errno != EINTR) break;
    if (stop_) break;
    if (polled[0].revents) {
      char drop[64];
      while (read(wake_[0], drop, sizeof drop) > 0) {
      }
    }
    const Clock::time_point after = Clock::now();
    // The waiting sockets first, so one that spoke is handed over before
    // the accepts below choose whom to close.
    const size_t first = 1 + listening_.fds.size();
    for (size_t i = 0; i < waiting_.size(); ++i)
      if (polled[first + i].revents) FirstBytes(waiting_[i].first, waiting_[i].second);
    for (size_t k = 0; k < listening_.fds.size(); ++k)
      if (polled[1 + k].revents) Accept(listening_.fds[k], after);
    table_.Expire(after);
    LogEvictions(after);
  }
}

void FrontDoor::Accept(int listen_fd, Clock::time_point now) {
  for (int k = 0; k < kAcceptsPerTurn; ++k) {
    std::string address;
    const int fd = AcceptPeer(listen_fd, address);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
        accept_paused_until_ = now + kAcceptPause;
      break;
    }
    const ConnectionTable::Room room = table_.MakeRoom(address, now);
    if (room == ConnectionTable::Room::kFull) {
      close(fd);  // every connection it could replace is being answered
      continue;
    }
    if (room == ConnectionTable::Room::kMade) {
      ++evicted_;
      ++evicted_unlogged_;
    }
    table_.Add(fd, std::move(address), now);
  }
}

void FrontDoor::FirstBytes(uint64_t id, int fd) {
  char first = 0;
  const ssize_t n = recv(fd, &first, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (n <= 0) {  // closed before a byte, or broken
    table_.Remove(id);
    return;
  }
  // A TLS handshake record starts 0x16; a request line, with a letter.
  if (tls_ && std::isupper(static_cast<unsigned char>(first))) {
    // What came is read first, so the close sends a FIN, not a reset
    // that could cost the browser the answer.
    char drop[4096];
    for (int i = 0; i < 16 && recv(fd, drop, sizeof drop, MSG_DONTWAIT) > 0; ++i) {
    }
    static const std::string answer = UseHttpsAnswer();
    [[maybe_unused]] const ssize_t sent =
        send(fd, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    shutdown(fd, SHUT_WR);
    table_.Remove(id);
    return;
  }
  table_.HandOver(id);
  if (!hand_over_(fd)) table_.Remove(id);
}

void FrontDoor::LogEvictions(Clock::time_point now) {
  if (evicted_unlogged_ > 0 && !eviction_logged_) {
    spdlog::warn(
        "dashboard: at its limit of {} connections ({} from one address); closing those idle "
        "longest to make room (counted once a minute from now on)",
        limits_.max_connections, limits_.per_address);
    eviction_logged_ = true;
    evicted_unlogged_ = 0;
    last_log_ = now;
  } else if (evicted_unlogged_ > 0 && now - last_log_ >= kLogEvery) {
    spdlog::warn("dashboard: {} connections closed to make room in the last minute ({} in all)",
                 evicted_unlogged_, evicted_);
    evicted_unlogged_ = 0;
    last_log_ = now;
  }
}

}  // namespace mt::http
