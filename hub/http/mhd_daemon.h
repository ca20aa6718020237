// libmicrohttpd (Debian's libmicrohttpd12) as the dashboard runs it: one
// internal thread over epoll, no listening socket of its own (the front
// door hands it each connection that spoke: front_door.h), HTTPS with the
// hub's certificate through GnuTLS, and these limits of its own: the
// memory a connection may hold (its request head included: a longer head
// is answered 431 and closed), the connections it holds, and a timeout
// without a byte either way. It parses the request line and header fields,
// writes the answers (keep-alive, pipelining, HEAD) and tells the
// connection table when a request is being answered and when the answer
// ended, so eviction never cuts one (connection_table.h).
#pragma once

#include <functional>
#include <string>

#include "hub/http/connection_table.h"
#include "hub/http/dashboard_routes.h"

struct MHD_Daemon;

namespace mt::http {

// What a connection may hold in libmicrohttpd: its read buffer, where the
// whole request head must fit with about 600 bytes to spare, and the
// answer's head. 9 KiB: heads up to about 8.5 KB, as the 8 KiB cap before
// it (what a browser sends fits many times over).
constexpr size_t kConnectionMemoryBytes = 9 * 1024;

class MhdDaemon {
 public:
  using Handler = std::function<Response(const DashboardRequest&)>;

  // Plain HTTP when `cert_pem` is empty. Throws std::invalid_argument
  // when the certificate and key are unusable, std::runtime_error when
  // libmicrohttpd cannot start.
  MhdDaemon(ConnectionTable& table, Handler handler, const std::string& cert_pem,
            const std::string& key_pem, const ServerLimits& limits);
  ~MhdDaemon();  // closes every connection it holds
  MhdDaemon(const MhdDaemon&) = delete;
  MhdDaemon& operator=(const MhdDaemon&) = delete;

  // Serves the connected socket `fd` from now on; false when it would
  // not (the socket is closed either way).
  bool Add(int fd);

 private:
  struct Callbacks;  // libmicrohttpd's, on its thread

  ConnectionTable& table_;
  Handler handler_;
  std::string cert_pem_, key_pem_;  // kept while the daemon runs
  MHD_Daemon* daemon_ = nullptr;
};

}  // namespace mt::http
