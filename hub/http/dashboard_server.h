// The hub's read-only HTTP endpoint (mthub --http-port): the live dashboard
// at /, Chart.js at /chart.js (both built into the binary: no files, no
// CDN), Prometheus text at /metrics and the same data as JSON at
// /api/status; 404 elsewhere, 405 for anything but GET (and HEAD), 401
// without the token when the hub has one (hub/monitor/access_token.h),
// checked before anything else. Over TLS with the hub's certificate
// unless told to speak plain HTTP. Served by libmicrohttpd (mhd_daemon.h)
// behind a front door of our own (front_door.h), bounded against hostile
// clients (docs/security.md).
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "hub/monitor/status_snapshot.h"

namespace mt {

// The address could not be bound (taken, or not this host's).
class DashboardBindError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The certificate (chain) and key to serve HTTPS with; empty: plain HTTP.
struct DashboardTls {
  std::string cert_pem, key_pem;
};

class DashboardServer {
 public:
  // Called on the server's thread for every /metrics and /api/status.
  using SnapshotFn = std::function<StatusSnapshot()>;

  // Binds bind:port (0: any free port; throws DashboardBindError) and
  // serves on a thread of its own until destroyed. Throws
  // std::invalid_argument when `tls` is unusable.
  DashboardServer(const std::string& bind, int port, std::string token, SnapshotFn snapshot,
                  const DashboardTls& tls = {});
  // Stops at once: open connections are closed.
  ~DashboardServer();
  DashboardServer(const DashboardServer&) = delete;
  DashboardServer& operator=(const DashboardServer&) = delete;

  int port() const { return port_; }
  bool tls() const { return tls_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
  bool tls_ = false;
};

}  // namespace mt
