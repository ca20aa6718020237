#include "hub/http/dashboard_routes.h"

#include <exception>

#include "hub/http/assets.h"
#include "hub/monitor/access_token.h"
#include "hub/monitor/prometheus_text.h"
#include "hub/monitor/status_json.h"

namespace mt::http {
namespace {

Response Route(const std::string& path, const SnapshotFn& snapshot) {
  if (path == "/")
    return Response::Static(200, "text/html; charset=utf-8", http_assets::kDashboardPage)
        .With("Cache-Control", "no-cache");
  if (path == "/chart.js")  // it changes only with the binary
    return Response::Static(200, "text/javascript; charset=utf-8", http_assets::kChartJs)
        .With("Cache-Control", "public, max-age=31536000, immutable");
  if (path == "/metrics")
    return Response::Owned(200, "text/plain; version=0.0.4; charset=utf-8",
                           PrometheusText(snapshot()))
        .With("Cache-Control", "no-store");
  if (path == "/api/status")
    return Response::Owned(200, "application/json", StatusJson(snapshot()).dump())
        .With("Cache-Control", "no-store");
  return Response::Text(404, "not found: the dashboard is /, its data /api/status and /metrics\n");
}

}  // namespace

Response DashboardResponse(const DashboardRequest& request, const std::string& token,
                           const SnapshotFn& snapshot) {
  if (!RequestAuthorized(token, request.authorization, request.query_token))
    return Response::Text(401,
                          "this hub needs its token: send Authorization: Bearer TOKEN, or add "
                          "?token=TOKEN to the address\n")
        .With("WWW-Authenticate", "Bearer realm=\"mthub\"");
  if (request.method != "GET" && request.method != "HEAD")
    return Response::Text(405, "read-only: GET only\n").With("Allow", "GET, HEAD");
  if (request.has_body) return Response::Text(413, "a GET has no body\n");
  try {
    return Route(request.path, snapshot);
  } catch (const std::exception& e) {
    return Response::Text(500, std::string(e.what()) + "\n");
  }
}

}  // namespace mt::http
