// The dashboard's files, built into mthub (hub/http/embed_assets.cmake), so
// the hub needs nothing at run time and works offline.
#pragma once

#include <string_view>

namespace mt::http_assets {

extern const std::string_view kDashboardPage;  // hub/http/dashboard.html
extern const std::string_view kChartJs;        // Debian's libjs-chart.js, its UMD build

}  // namespace mt::http_assets
