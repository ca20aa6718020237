// The sockets under the dashboard's server: a listening one (without
// SO_REUSEPORT, so a taken port is an error and not a shared one) and the
// text of a peer's address, which the connection limits count by.
#pragma once

#include <string>

namespace mt::http {

// Listens on bind:port (0: any free port), non-blocking. Throws
// std::runtime_error saying why not.
int ListenTcp(const std::string& bind, int port);
// The port `fd` listens on.
int BoundPort(int fd);
// Accepts one connection, non-blocking, with TCP_NODELAY; -1 (errno set)
// when none. `address`: the peer's IP address as text.
int AcceptConnection(int listen_fd, std::string& address);

}  // namespace mt::http
