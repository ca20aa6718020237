#include "hub/net/listen_socket.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace mt {
namespace {

// Room for workers that connect while the accept loop is busy refusing.
constexpr int kBacklog = 1024;

std::string WhyNot(int error, const std::string& address, int port, const std::string& port_flag) {
  if (error == EADDRINUSE)
    return "cannot listen on " + address + ": port " + std::to_string(port) +
           " is already in use (another mthub?); stop it or choose another " + port_flag;
  if (error == EACCES)
    return "cannot listen on " + address + ": port " + std::to_string(port) +
           " needs privileges; choose a port above 1023";
  return "cannot listen on " + address + ": " + std::strerror(error);
}

// The socket bound and listening, or -1 with errno set.
int BindAndListen(const sockaddr* addr, socklen_t len, bool dual_stack) {
  const int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  const int one = 1, zero = 0;
  // SO_REUSEADDR lets a restarted hub bind while old connections linger in
  // TIME_WAIT; on Linux it never lets two listeners share the port.
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (dual_stack) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
  // What gRPC set on its own listener, for the connections to inherit: no
  // Nagle delay on a step's small messages, and a peer that stops
  // acknowledging is given up after 20 s.
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  const int user_timeout_ms = 20'000;
  setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof(user_timeout_ms));
  if (bind(fd, addr, len) != 0 || listen(fd, kBacklog) != 0) {
    const int error = errno;
    close(fd);
    errno = error;
    return -1;
  }
  return fd;
}

int BoundPort(int fd) {
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  if (bound.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
}

}  // namespace

ListenSocket OpenListenSocket(const std::string& bind, int port, const std::string& port_flag) {
  std::string host = bind;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  const std::string address =
      (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
  // Any address: IPv6 with IPv4 mapped onto it, as gRPC listened before,
  // else IPv4 alone on a machine without IPv6.
  if (host.empty() || host == "0.0.0.0" || host == "::") {
    sockaddr_in6 any6{};
    any6.sin6_family = AF_INET6;
    any6.sin6_addr = in6addr_any;
    any6.sin6_port = htons(static_cast<uint16_t>(port));
    int fd = BindAndListen(reinterpret_cast<sockaddr*>(&any6), sizeof(any6), true);
    if (fd < 0 && (errno == EAFNOSUPPORT || errno == EADDRNOTAVAIL)) {
      sockaddr_in any4{};
      any4.sin_family = AF_INET;
      any4.sin_addr.s_addr = htonl(INADDR_ANY);
      any4.sin_port = htons(static_cast<uint16_t>(port));
      fd = BindAndListen(reinterpret_cast<sockaddr*>(&any4), sizeof(any4), false);
    }
    if (fd < 0) throw std::runtime_error(WhyNot(errno, address, port, port_flag));
    return {{fd}, BoundPort(fd)};
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (rc != 0) throw std::runtime_error("cannot listen on " + address + ": " + gai_strerror(rc));
  ListenSocket bound;
  std::vector<std::string> seen;  // a name listed twice in /etc/hosts is bound once
  int error = EADDRNOTAVAIL;
  bool fatal = false;
  for (const addrinfo* a = found; a != nullptr && !fatal; a = a->ai_next) {
    sockaddr_storage addr{};
    std::memcpy(&addr, a->ai_addr, a->ai_addrlen);
    // Port 0: the kernel's choice for the first address, the same for the rest.
    if (bound.port != 0 && addr.ss_family == AF_INET6)
      reinterpret_cast<sockaddr_in6&>(addr).sin6_port = htons(static_cast<uint16_t>(bound.port));
    else if (bound.port != 0)
      reinterpret_cast<sockaddr_in&>(addr).sin_port = htons(static_cast<uint16_t>(bound.port));
    const std::string key(reinterpret_cast<const char*>(&addr), a->ai_addrlen);
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    const int fd = BindAndListen(reinterpret_cast<sockaddr*>(&addr), a->ai_addrlen, false);
    if (fd >= 0) {
      bound.fds.push_back(fd);
      if (bound.port == 0) bound.port = BoundPort(fd);
    } else {
      error = errno;
      fatal = error == EADDRINUSE || error == EACCES;
    }
  }
  freeaddrinfo(found);
  if (fatal || bound.fds.empty()) {
    bound.Close();
    throw std::runtime_error(WhyNot(error, address, port, port_flag));
  }
  return bound;
}

std::string PeerAddress(const sockaddr_storage& peer) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (peer.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(peer).sin_addr, text, sizeof(text));
  } else if (peer.ss_family == AF_INET6) {
    const in6_addr& a = reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&a))
      inet_ntop(AF_INET, &a.s6_addr[12], text, sizeof(text));
    else
      inet_ntop(AF_INET6, &a, text, sizeof(text));
  }
  return text;
}

int AcceptPeer(int listen_fd, std::string& address, int* port) {
  sockaddr_storage peer{};
  socklen_t len = sizeof(peer);
  const int fd =
      accept4(listen_fd, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) return fd;
  address = PeerAddress(peer);
  if (port)
    *port = ntohs(peer.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6&>(peer).sin6_port
                                             : reinterpret_cast<const sockaddr_in&>(peer).sin_port);
  return fd;
}

void ListenSocket::Close() {
  for (int fd : fds) close(fd);
  fds.clear();
}

}  // namespace mt
