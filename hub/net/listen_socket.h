// The hub's listening sockets, for its gRPC port and its dashboard alike,
// opened by the hub rather than by gRPC or an HTTP library: both set
// SO_REUSEPORT, so a second hub on a taken port would start too and share
// the workers; and gRPC's own accept loop stops for good at the first "too
// many open files" (hub/grpc/connection_gate.h accepts instead).
#pragma once

#include <sys/socket.h>

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
// and listens, non-blocking. Throws std::runtime_error naming the address
// and why it cannot be bound (a port in use says so, and names `port_flag`
// as the way to choose another).
ListenSocket OpenListenSocket(const std::string& bind, int port,
                              const std::string& port_flag = "--port");

// The peer's address without its port; an IPv4 peer of a dual-stack socket
// as plain IPv4, so that it shares its per-address cap with itself either way.
std::string PeerAddress(const sockaddr_storage& peer);

// Accepts one connection, non-blocking and close-on-exec; -1 with errno
// set when none (EAGAIN) or none can be (EMFILE, ...). `address`: the
// peer's, as PeerAddress gives it; `port` (when given): the peer's port.
int AcceptPeer(int listen_fd, std::string& address, int* port = nullptr);

}  // namespace mt
