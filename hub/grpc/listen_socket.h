// The hub's listening socket, opened by the hub rather than by gRPC: gRPC
// sets SO_REUSEPORT, so a second hub on a taken port would start too and
// share the workers; and gRPC's own accept loop stops for good at the first
// "too many open files" (hub/grpc/connection_gate.h accepts instead).
#pragma once

#include <string>
#include <vector>

namespace mt {

struct ListenSocket {
  std::vector<int> fds;  // one per address the bind name has
  int port = 0;          // as bound (the one the kernel chose for port 0)
  void Close();
};

// Binds `bind`:`port` (no SO_REUSEPORT; "0.0.0.0" and "::" listen on IPv4
// and IPv6 where the machine has both, a name on each of its addresses)
// and listens. Throws std::runtime_error naming the address and why it
// cannot be bound (a port in use says so).
ListenSocket OpenListenSocket(const std::string& bind, int port);

}  // namespace mt
