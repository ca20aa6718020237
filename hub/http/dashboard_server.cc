#include "hub/http/dashboard_server.h"

#include "hub/http/dashboard_routes.h"
#include "hub/http/http_server.h"
#include "hub/net/listen_socket.h"

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
  ListenSocket listening;
  try {
    listening = OpenListenSocket(bind, port, "--http-port");
  } catch (const std::runtime_error& e) {
    throw DashboardBindError(std::string("the dashboard ") + e.what());
  }
  port_ = listening.port;
  tls_ = context != nullptr;
  impl_->server = std::make_unique<http::HttpServer>(
      std::move(listening), std::move(context),
      [token = std::move(token), snapshot = std::move(snapshot)](const http::RequestHead& head) {
        return http::DashboardResponse(head, token, snapshot);
      });
}

DashboardServer::~DashboardServer() = default;

}  // namespace mt
