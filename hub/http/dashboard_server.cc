#include "hub/http/dashboard_server.h"

#include "hub/http/dashboard_routes.h"
#include "hub/http/http_server.h"
#include "hub/http/listen_socket.h"

namespace mt {

struct DashboardServer::Impl {
  std::unique_ptr<http::HttpServer> server;
};

DashboardServer::DashboardServer(const std::string& bind, int port, std::string token,
                                 SnapshotFn snapshot, const DashboardTls& tls)
    : impl_(std::make_unique<Impl>()) {
  std::unique_ptr<http::TlsContext> context;
  if (!tls.cert_pem.empty())
    context = std::make_unique<http::TlsContext>(tls.cert_pem, tls.key_pem);
  int fd = -1;
  try {
    fd = http::ListenTcp(bind, port);
  } catch (const std::runtime_error& e) {
    throw DashboardBindError("cannot listen on " + bind + ":" + std::to_string(port) +
                             " for the dashboard (" + e.what() + "; is the port taken?)");
  }
  port_ = http::BoundPort(fd);
  tls_ = context != nullptr;
  impl_->server = std::make_unique<http::HttpServer>(
      fd, std::move(context),
      [token = std::move(token), snapshot = std::move(snapshot)](const http::RequestHead& head) {
        return http::DashboardResponse(head, token, snapshot);
      });
}

DashboardServer::~DashboardServer() = default;

}  // namespace mt
