// HTTP(S) from end-to-end tests: a free port to hand a daemon, and GETs with
// cpp-httplib's client (tests that include this link PkgConfig::CPP_HTTPLIB).
#pragma once

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

namespace mt::test_support {

// A port nothing listens on now: bound on 127.0.0.1 by the kernel's choice,
// then let go. Another process could take it before the daemon does; in
// practice the kernel hands out ports in turn, so it stays free.
inline int FreeTcpPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

struct HttpReply {
  int status = 0;  // 0: no answer (refused, timed out)
  std::string body, content_type;
};

// How the dashboard speaks: HTTPS with the hub's certificate by default.
enum class Scheme { kHttp, kHttps };

// GET <scheme>://127.0.0.1:port<path>, with `Authorization: Bearer
// <bearer>` when given; bounded by a few seconds. HTTPS trusts whatever
// certificate the server shows: the tests pin nothing, they check the
// server's answers.
inline HttpReply HttpGet(int port, const std::string& path, const std::string& bearer = "",
                         Scheme scheme = Scheme::kHttp) {
  // OpenSSL writes with write(): a server that closes mid-request (a hub
  // at the end of its run, in this very process) would raise SIGPIPE and
  // end the whole test binary rather than fail this GET.
  static const bool sigpipe_ignored = std::signal(SIGPIPE, SIG_IGN) != SIG_ERR;
  (void)sigpipe_ignored;
  std::unique_ptr<httplib::ClientImpl> client;
  if (scheme == Scheme::kHttps) {
    auto tls = std::make_unique<httplib::SSLClient>("127.0.0.1", port);
    tls->enable_server_certificate_verification(false);
    client = std::move(tls);
  } else {
    client = std::make_unique<httplib::ClientImpl>("127.0.0.1", port);
  }
  client->set_connection_timeout(2);
  client->set_read_timeout(5);
  httplib::Headers headers;
  if (!bearer.empty()) headers.emplace("Authorization", "Bearer " + bearer);
  const httplib::Result r = client->Get(path, headers);
  HttpReply reply;
  if (!r) return reply;
  reply.status = r->status;
  reply.body = r->body;
  reply.content_type = r->get_header_value("Content-Type");
  return reply;
}

// Polls GET path until it answers with `status`; the last reply either way.
inline HttpReply AwaitHttp(int port, const std::string& path, int status, double timeout_s,
                           const std::string& bearer = "", Scheme scheme = Scheme::kHttp) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    HttpReply r = HttpGet(port, path, bearer, scheme);
    if (r.status == status || std::chrono::steady_clock::now() >= deadline) return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace mt::test_support
