// The dashboard as mthub's flags configure it (HubConfig::http): HTTPS
// with the hub's certificate unless --http-plain or --insecure, on
// --http-bind, behind the token; a taken default port only warns. Used by
// a training hub and by mthub --serve-report alike.
#pragma once

#include <memory>

#include "hub/http/dashboard_server.h"
#include "hub/hub_config.h"

namespace mt {

// Null when --http-port is 0, or its default port is taken (warned).
// Throws std::runtime_error when a port the user named is taken.
std::unique_ptr<DashboardServer> StartDashboardServer(const HubConfig& config,
                                                      DashboardServer::SnapshotFn snapshot);

}  // namespace mt
