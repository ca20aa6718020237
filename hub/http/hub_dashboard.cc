#include "hub/http/hub_dashboard.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include "tls/hub_identity.h"

namespace mt {
namespace {

// Where a browser on another machine finds the hub: its host name when it
// listens on every address, else the address it listens on.
std::string UrlHost(const std::string& bind) {
  if (bind == "0.0.0.0" || bind == "::" || bind == "[::]") {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) == 0 && name[0]) return name;
    return "localhost";
  }
  if (bind.find(':') != std::string::npos && bind.front() != '[') return "[" + bind + "]";
  return bind;
}

// The hub's own certificate (tls/hub_identity.h), unless in plain HTTP.
DashboardTls DashboardCertificate(const HubConfig& config) {
  if (config.http.plain || config.tls.insecure) return {};
  const tls::HubIdentity id = tls::LoadOrCreateHubIdentity(config.tls);
  return {id.cert_pem, id.key_pem};
}

}  // namespace

std::unique_ptr<DashboardServer> StartDashboardServer(const HubConfig& config,
                                                      DashboardServer::SnapshotFn snapshot) {
  const DashboardSettings& http = config.http;
  if (http.port <= 0) return nullptr;
  std::unique_ptr<DashboardServer> server;
  try {
    server = std::make_unique<DashboardServer>(http.bind, http.port, config.token,
                                               std::move(snapshot), DashboardCertificate(config));
  } catch (const DashboardBindError& e) {
    // The default port taken (another hub on this machine, say) costs the
    // dashboard, not the run; a port the user named is a mistake to fix.
    if (http.port_explicit)
      throw std::runtime_error(std::string(e.what()) +
                               ": --http-port names another port, 0 turns the dashboard off");
    spdlog::warn("{}; the hub runs without it (--http-port names another port, 0 turns it off)",
                 e.what());
    return nullptr;
  }
  spdlog::info("dashboard: {}://{}:{}/{} (Prometheus /metrics, JSON /api/status{})",
               server->tls() ? "https" : "http", UrlHost(http.bind), server->port(),
               config.token.empty() ? "" : "?token=TOKEN",
               server->tls() ? "; the hub's certificate, as its fingerprint above says"
                             : "; plain HTTP: the token travels in clear");
  return server;
}

}  // namespace mt
