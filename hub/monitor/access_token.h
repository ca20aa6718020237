// Who may read the hub's live views: with a token (HubConfig::token), a
// request must carry it, as `Authorization: Bearer TOKEN` (what Prometheus'
// scrape config sends) or as `?token=TOKEN` (a browser's address bar; the
// dashboard passes it on to its own requests). Without a token, anyone.
// The HTTP adapter knows the request; this knows the rule.
#pragma once

#include <string>

namespace mt {

// `authorization`: the Authorization header ("" when absent); `query_token`:
// the token query parameter ("" when absent). Compared in constant time.
bool RequestAuthorized(const std::string& expected_token, const std::string& authorization,
                       const std::string& query_token);

}  // namespace mt
