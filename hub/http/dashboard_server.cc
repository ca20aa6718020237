#include "hub/http/dashboard_server.h"

#include "hub/http/connection_table.h"
#include "hub/http/front_door.h"
#include "hub/http/mhd_daemon.h"
#include "hub/net/listen_socket.h"

namespace mt {

// Destroyed in reverse: the front door stops handing over, libmicrohttpd
// closes what it holds (telling the table), then the table goes.
struct DashboardServer::Impl {
  explicit Impl(const http::ServerLimits& limits) : table(limits) {}
  http::ConnectionTable table;
  std::unique_ptr<http::MhdDaemon> daemon;
  std::unique_ptr<http::FrontDoor> door;
};

DashboardServer::DashboardServer(const std::string& bind, int port, std::string token,
                                 SnapshotFn snapshot, const DashboardTls& tls) {
  const http::ServerLimits limits;
  impl_ = std::make_unique<Impl>(limits);
  impl_->daemon = std::make_unique<http::MhdDaemon>(
      impl_->table,
      [token = std::move(token),
       snapshot = std::move(snapshot)](const http::DashboardRequest& request) {
        return http::DashboardResponse(request, token, snapshot);
      },
      tls.cert_pem, tls.key_pem, limits);
  ListenSocket listening;
  try {
    listening = OpenListenSocket(bind, port, "--http-port");
  } catch (const std::runtime_error& e) {
    throw DashboardBindError(std::string("the dashboard ") + e.what());
  }
  port_ = listening.port;
  tls_ = !tls.cert_pem.empty();
  http::MhdDaemon* daemon = impl_->daemon.get();
  impl_->door = std::make_unique<http::FrontDoor>(
      std::move(listening), impl_->table, [daemon](int fd) { return daemon->Add(fd); }, tls_,
      limits);
}

DashboardServer::~DashboardServer() = default;

}  // namespace mt
