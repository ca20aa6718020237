// What the dashboard answers to one request, over the parsed head alone
// (no sockets): the token first, when the hub has one, before anything
// else is looked at; then GET/HEAD only, no request bodies, and the four
// routes (dashboard_server.h lists them).
#pragma once

#include <functional>
#include <string>

#include "hub/http/request_head.h"
#include "hub/http/response.h"
#include "hub/monitor/status_snapshot.h"

namespace mt::http {

using SnapshotFn = std::function<StatusSnapshot()>;

Response DashboardResponse(const RequestHead& request, const std::string& token,
                           const SnapshotFn& snapshot);

}  // namespace mt::http
