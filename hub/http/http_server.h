// The dashboard's HTTP/1.1 server: one thread, poll() over the listening
// socket and every connection (all non-blocking), each connection a state
// machine (http_connection.h) with a deadline. Memory is bounded by design:
// at most max_connections, each holding at most a request head and one
// answer. When the table is full, or one address holds its share of it,
// a new connection closes the one (of that address first) that stayed
// silent, or else went longest without a byte either way, and never one
// serving a request (http/connection_limits.h); so a flood of idle or slow
// sockets cannot lock a real client out, nor cut its request in flight;
// that is logged once, with counts once a minute.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "hub/http/http_connection.h"
#include "hub/http/tls_stream.h"
#include "hub/net/listen_socket.h"

namespace mt::http {

struct ServerLimits {
  size_t max_connections = 64;
  size_t per_address = 16;  // of max_connections
  ConnectionTimeouts timeouts;
};

// What the server did, for tests and the log.
struct ServerCounts {
  std::atomic<uint64_t> accepted{0}, evicted{0}, timed_out{0}, refused_heads{0}, not_tls{0};
  // New connections closed at once: every one they could replace was answering.
  std::atomic<uint64_t> refused_full{0};
};

class HttpServer {
 public:
  // Serves `listening` (owned from now on) on a thread of its own until
  // destroyed; with `tls`, every connection speaks TLS.
  HttpServer(ListenSocket listening, std::unique_ptr<TlsContext> tls, Handler handler,
             ServerLimits limits = {});
  ~HttpServer();  // closes every connection and joins the thread
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  const ServerCounts& counts() const { return counts_; }

 private:
  struct Loop;
  void Run();
  // The closed connections go, counted by why.
  void RemoveClosed(Loop& loop);
  // Takes what waits on the listening socket, making room as it must.
  void Accept(Loop& loop, int listen_fd, Clock::time_point now);
  // ConnectionToEvict for a new connection from `address`; a silent choice
  // with bytes already waiting is served instead and the choice made again.
  int Victim(Loop& loop, const std::string& address, Clock::time_point now);
  // A flood is logged once, then counted once a minute while it lasts.
  void LogEvictions(Loop& loop, Clock::time_point now);

  ListenSocket listening_;
  int wake_[2] = {-1, -1};  // a pipe: the destructor wakes poll() with it
  std::unique_ptr<TlsContext> tls_;
  Handler handler_;
  ServerLimits limits_;
  ServerCounts counts_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace mt::http
