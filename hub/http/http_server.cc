#include "hub/http/http_server.h"

#include <fcntl.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "hub/http/connection_limits.h"

namespace mt::http {
namespace {

// Connections accepted per turn of the loop: a backlog of hundreds is
// taken in a few turns, and the open connections are served in between.
// How many silent victims with bytes waiting one accept serves before it
// closes the next choice anyway (a flood cannot make it read forever).
constexpr int kRecheckVictims = 8;
constexpr int kAcceptsPerTurn = 128;
// The longest poll() sleeps; deadlines are checked at least this often.
constexpr int kMaxPollMs = 500;
// Out of file descriptors: stop accepting for this long rather than spin.
constexpr auto kAcceptPause = std::chrono::milliseconds(100);
constexpr auto kLogEvery = std::chrono::minutes(1);

}  // namespace

// The loop thread's own state.
struct HttpServer::Loop {
  std::vector<std::unique_ptr<HttpConnection>> connections;
  std::vector<pollfd> polled;
  std::vector<ConnectionView> views;
  Clock::time_point accept_paused_until{};
  // Evictions since the last log line about them.
  uint64_t evicted_unlogged = 0;
  bool eviction_logged = false;
  Clock::time_point last_log{};
};

HttpServer::HttpServer(ListenSocket listening, std::unique_ptr<TlsContext> tls, Handler handler,
                       ServerLimits limits)
    : listening_(std::move(listening)),
      tls_(std::move(tls)),
      handler_(std::move(handler)),
      limits_(limits) {
  if (pipe2(wake_, O_NONBLOCK | O_CLOEXEC) != 0) {
    listening_.Close();
    throw std::runtime_error("cannot make the dashboard's wake-up pipe");
  }
  thread_ = std::thread([this] { Run(); });
}

HttpServer::~HttpServer() {
  stop_ = true;
  const char byte = 1;
  [[maybe_unused]] const ssize_t n = write(wake_[1], &byte, 1);
  if (thread_.joinable()) thread_.join();
  close(wake_[0]);
  close(wake_[1]);
  listening_.Close();
}

void HttpServer::Run() {
  Loop loop;
  while (!stop_) {
    const Clock::time_point now = Clock::now();
    const bool accepting = now >= loop.accept_paused_until;
    loop.polled.clear();
    loop.polled.push_back({wake_[0], POLLIN, 0});
    for (int fd : listening_.fds) loop.polled.push_back({accepting ? fd : -1, POLLIN, 0});
    Clock::time_point next = now + std::chrono::milliseconds(kMaxPollMs);
    for (const auto& c : loop.connections) {
      loop.polled.push_back({c->fd(), c->PollEvents(), 0});
      next = std::min(next, c->ready() ? now : c->deadline());
    }
    if (!accepting) next = std::min(next, loop.accept_paused_until);
    // Rounded up, so a deadline has passed when poll() returns for it.
    const int64_t wait_ms =
        next <= now ? 0
                    : std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count() + 1;
    if (poll(loop.polled.data(), loop.polled.size(), static_cast<int>(wait_ms)) < 0 &&
        errno != EINTR)
      break;
    if (stop_) break;
    if (loop.polled[0].revents) {
      char drop[64];
      while (read(wake_[0], drop, sizeof drop) > 0) {
      }
    }
    const Clock::time_point after = Clock::now();
    // The open connections first, by their poll slots (accepting below
    // appends and evicts).
    const size_t first = 1 + listening_.fds.size();
    for (size_t i = 0; i < loop.connections.size(); ++i) {
      HttpConnection& c = *loop.connections[i];
      if (loop.polled[first + i].revents || c.ready() || after >= c.deadline())
        c.Advance(handler_, after);
    }
    RemoveClosed(loop);
    for (size_t k = 0; k < listening_.fds.size(); ++k)
      if (loop.polled[1 + k].revents) Accept(loop, listening_.fds[k], after);
    LogEvictions(loop, after);
  }
}

void HttpServer::RemoveClosed(Loop& loop) {
  auto closed =
      std::remove_if(loop.connections.begin(), loop.connections.end(), [this](const auto& c) {
        if (c->state() != HttpConnection::State::kClosed) return false;
        switch (c->end()) {
          case HttpConnection::End::kTimedOut: ++counts_.timed_out; break;
          case HttpConnection::End::kRefusedHead: ++counts_.refused_heads; break;
          case HttpConnection::End::kNotTls: ++counts_.not_tls; break;
          default: break;
        }
        return true;
      });
  loop.connections.erase(closed, loop.connections.end());
}

int HttpServer::Victim(Loop& loop, const std::string& address, Clock::time_point now) {
  for (int looked = 0;; ++looked) {
    loop.views.clear();
    for (const auto& c : loop.connections)
      loop.views.push_back({c->address(), c->last_progress(), c->answering(), c->spoke()});
    const int victim =
        ConnectionToEvict(loop.views, address, limits_.max_connections, limits_.per_address);
    if (victim < 0 || looked == kRecheckVictims || loop.views[victim].spoke) return victim;
    // Silent so far, but its first bytes may have come since it was last
    // read (a client's TLS hello right after the accept): then it is a
    // request starting, not an idle socket. Served, it spoke.
    HttpConnection& c = *loop.connections[static_cast<size_t>(victim)];
    if (!c.HasInput()) return victim;
    c.Advance(handler_, now);
  }
}

void HttpServer::Accept(Loop& loop, int listen_fd, Clock::time_point now) {
  for (int k = 0; k < kAcceptsPerTurn; ++k) {
    std::string address;
    const int fd = AcceptPeer(listen_fd, address);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
        loop.accept_paused_until = now + kAcceptPause;
      break;
    }
    ++counts_.accepted;
    const int victim = Victim(loop, address, now);
    if (victim == kRefuseNewConnection) {
      // Every connection it could replace is serving a request.
      close(fd);
      ++counts_.refused_full;
      continue;
    }
    if (victim >= 0) {
      loop.connections.erase(loop.connections.begin() + victim);
      ++counts_.evicted;
      ++loop.evicted_unlogged;
    }
    std::unique_ptr<ByteStream> stream = tls_ ? tls_->Accept(fd) : MakePlainStream(fd);
    if (!stream) {
      close(fd);
      continue;
    }
    loop.connections.push_back(
        std::make_unique<HttpConnection>(std::move(stream), address, now, limits_.timeouts));
    loop.connections.back()->Advance(handler_, now);
  }
}

void HttpServer::LogEvictions(Loop& loop, Clock::time_point now) {
  if (loop.evicted_unlogged > 0 && !loop.eviction_logged) {
    spdlog::warn(
        "dashboard: at its limit of {} connections ({} from one address); closing those idle "
        "longest to make room (counted once a minute from now on)",
        limits_.max_connections, limits_.per_address);
    loop.eviction_logged = true;
    loop.evicted_unlogged = 0;
    loop.last_log = now;
  } else if (loop.evicted_unlogged > 0 && now - loop.last_log >= kLogEvery) {
    spdlog::warn("dashboard: {} connections closed to make room in the last minute ({} in all)",
                 loop.evicted_unlogged, counts_.evicted.load());
    loop.evicted_unlogged = 0;
    loop.last_log = now;
  }
}

}  // namespace mt::http
