// What the dashboard answers to one request, over its head alone (no
// sockets): the token first, when the hub has one, before anything else
// is looked at; then GET/HEAD only, no request bodies, and the four
// routes (dashboard_server.h lists them).
#pragma once

#include <functional>
#include <string>

#include "hub/http/response.h"
#include "hub/monitor/status_snapshot.h"

namespace mt::http {

using SnapshotFn = std::function<StatusSnapshot()>;

// What the routes read of a request head (libmicrohttpd parsed it).
struct DashboardRequest {
  std::string method;
  std::string path;           // without the query
  std::string authorization;  // the Authorization field; "" when absent
  std::string query_token;    // ?token=, decoded; "" when absent
  bool has_body = false;      // Content-Length above 0, or any Transfer-Encoding
};

Response DashboardResponse(const DashboardRequest& request, const std::string& token,
                           const SnapshotFn& snapshot);

}  // namespace mt::http
