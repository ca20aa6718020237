// The hub's listening socket, opened by the hub rather than by gRPC: gRPC
// sets SO_REUSEPORT, so a second hub on a taken port would start too and
// share the workers; and gRPC's own accept loop stops for good at the first
// "too many open files" (hub/grpc/connection_gate.h accepts instead).
#pragma once

#include <string>

namespace mt {

struct ListenSocket {
  int fd = -1;
  int port = 0;  // as bound (the one the kernel chose for port 0)
};

// Binds `bind`:`port` (no SO_REUSEPORT; "0.0.0.0" and "::" listen on IPv4
// and IPv6 where the machine has both) and listens. Throws
// std::runtime_error naming the address and why it cannot be bound (a port
// in use says so).
ListenSocket OpenListenSocket(const std::string& bind, int port);

}  // namespace mt
