// The hub's accept loop in front of gRPC: it accepts on the hub's own
// listening socket (hub/net/listen_socket.h), refuses connections beyond
// the caps (hub/grpc/connection_ledger.h) and hands the rest to gRPC, which
// does TLS and HTTP/2 on them as on its own. gRPC's accept loop, by
// contrast, stops for good at the first "too many open files", and a flood
// of idle sockets would lock every worker out until the hub restarts.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "hub/grpc/connection_ledger.h"
#include "hub/net/listen_socket.h"

namespace grpc::experimental {
class ExternalConnectionAcceptor;
}

namespace mt {

// Raises this process's soft limit on open files to its hard limit (systemd
// and many shells start services at 1024) and returns the soft limit now.
long RaiseOpenFileLimit();

class ConnectionGate {
 public:
  // `ledger` counts what is admitted; it must outlive the gate.
  ConnectionGate(ListenSocket socket, ConnectionLedger& ledger);
  // Stops accepting and closes the listening socket.
  ~ConnectionGate();
  ConnectionGate(const ConnectionGate&) = delete;
  ConnectionGate& operator=(const ConnectionGate&) = delete;

  // Accepts from now on, handing each connection admitted to `acceptor`,
  // which must outlive the gate.
  void Start(grpc::experimental::ExternalConnectionAcceptor* acceptor);
  int port() const { return socket_.port; }

 private:
  void AcceptLoop();
  // Accepts one connection and admits or refuses it; false when there was
  // none to accept.
  bool AcceptOne(int listen_fd);
  void Refuse(int fd, const std::string& address, const std::string& why);
  // Past the open-file limit: accepts with the spare descriptor and closes,
  // so the connection is refused instead of left waiting in the backlog.
  void RefuseWithSpare(int listen_fd);

  ListenSocket socket_;
  ConnectionLedger& ledger_;
  grpc::experimental::ExternalConnectionAcceptor* acceptor_ = nullptr;
  int wake_fd_ = -1;   // an eventfd the destructor writes to end the loop
  int spare_fd_ = -1;  // /dev/null, given up when the descriptors run out
  std::atomic<bool> stopping_{false};
  // Refusals since the last line about them, and when to write the next.
  struct RefusalLog {
    int64_t total = 0;
    int64_t since_logged = 0;
    std::string last_address, last_why;
    ConnectionLedger::Clock::time_point next_line{};
  } refusals_;
  std::thread thread_;
};

}  // namespace mt
