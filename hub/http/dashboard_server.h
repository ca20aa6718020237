// The hub's read-only HTTP endpoint (mthub --http-port): the live dashboard
// at /, Chart.js at /chart.js (both built into the binary: no files, no
// CDN), Prometheus text at /metrics and the same data as JSON at
// /api/status; 404 elsewhere, 405 for anything but GET (and HEAD), 401
// without the token when the hub has one (hub/monitor/access_token.h). The
// only code that knows cpp-httplib.
// Plain HTTP: a token on it travels in clear (docs/operations.md).
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

class DashboardServer {
 public:
  // Called on the server's threads for every /metrics and /api/status.
  using SnapshotFn = std::function<StatusSnapshot()>;

  // Binds bind:port (throws DashboardBindError) and serves on threads of
  // its own until destroyed.
  DashboardServer(const std::string& bind, int port, std::string token, SnapshotFn snapshot);
  // Stops listening and waits for requests in flight (a browser's idle
  // keep-alive connection holds it up to a second).
  ~DashboardServer();
  DashboardServer(const DashboardServer&) = delete;
  DashboardServer& operator=(const DashboardServer&) = delete;

  int port() const { return port_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace mt
