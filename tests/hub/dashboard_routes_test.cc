// The dashboard server's pure parts: which connection a full table closes,
// and what the routes answer (the token before anything else). No sockets
// here; the server (libmicrohttpd behind the front door) under a flood is
// tests/hub/dashboard_flood_test.cc.
#include <gtest/gtest.h>

#include <string>

#include "hub/http/connection_limits.h"
#include "hub/http/dashboard_routes.h"

namespace mt::http {
namespace {

TEST(ConnectionLimits, RoomMeansNoneAndAFullTableClosesTheStalest) {
  using std::chrono::seconds;
  const auto t0 = std::chrono::steady_clock::time_point{} + seconds(100);
  std::vector<ConnectionView> open = {{"10.0.0.1", t0 + seconds(3), false},
                                      {"10.0.0.2", t0 + seconds(1), true},
                                      {"10.0.0.3", t0 + seconds(2), false}};
  EXPECT_EQ(ConnectionToEvict(open, "10.0.0.9", 4, 4), -1);
  // Full: the stalest that is not answering, before one that is.
  EXPECT_EQ(ConnectionToEvict(open, "10.0.0.9", 3, 4), 2);
  // An address at its share churns its own, even with room left.
  open[2].answering = true;
  open.push_back({"10.0.0.3", t0 + seconds(5), false});
  EXPECT_EQ(ConnectionToEvict(open, "10.0.0.3", 10, 2), 3);
  EXPECT_EQ(ConnectionToEvict(open, "10.0.0.1", 10, 2), -1);
}

TEST(ConnectionLimits, AmongSilentOnesTheAddressHoldingMostGoesFirst) {
  // A GET's connection accepted amid a flood from many addresses is the
  // oldest silent one until its TLS hello arrives: an address with more
  // sockets gives one up first.
  using std::chrono::seconds;
  const auto t0 = std::chrono::steady_clock::time_point{} + seconds(100);
  const std::vector<ConnectionView> open = {{"10.0.0.1", t0, false},
                                            {"10.0.0.2", t0 + seconds(2), false},
                                            {"10.0.0.2", t0 + seconds(1), false},
                                            {"10.0.0.3", t0 + seconds(3), false, true}};
  EXPECT_EQ(ConnectionToEvict(open, "10.0.0.9", 4, 4), 2);
  // One that spoke still outlasts every silent one, whatever its address.
  const std::vector<ConnectionView> spoke = {{"10.0.0.1", t0, false},
                                             {"10.0.0.2", t0 + seconds(2), false, true},
                                             {"10.0.0.2", t0 + seconds(1), false, true}};
  EXPECT_EQ(ConnectionToEvict(spoke, "10.0.0.9", 3, 4), 0);
}

TEST(ConnectionLimits, ARequestInFlightIsNeverTheOneClosed) {
  // Issue 45, finding 11: under eviction floods 14-38% of authorised GETs
  // lost their connection mid-request.
  using std::chrono::seconds;
  const auto t0 = std::chrono::steady_clock::time_point{} + seconds(100);
  std::vector<ConnectionView> open = {{"10.0.0.1", t0 + seconds(1), false, true},
                                      {"10.0.0.2", t0 + seconds(3), false, false},
                                      {"10.0.0.3", t0 + seconds(2), true, true}};
  // A silent socket goes before one that spoke, even one accepted later.
  EXPECT_EQ(ConnectionToEvict(open, "10.0.0.9", 3, 4), 1);
  // Among those that spoke, the longest without a byte.
  open[1].spoke = true;
  EXPECT_EQ(ConnectionToEvict(open, "10.0.0.9", 3, 4), 0);
  // One answering a request is never closed: with nothing else, the new
  // connection is refused, for the table and for an address's share alike.
  open[0].answering = open[1].answering = true;
  EXPECT_EQ(ConnectionToEvict(open, "10.0.0.9", 3, 4), kRefuseNewConnection);
  EXPECT_EQ(ConnectionToEvict(open, "10.0.0.3", 10, 1), kRefuseNewConnection);
}

DashboardRequest Request(const std::string& method, const std::string& path,
                         const std::string& authorization = "",
                         const std::string& query_token = "") {
  DashboardRequest request;
  request.method = method;
  request.path = path;
  request.authorization = authorization;
  request.query_token = query_token;
  return request;
}

TEST(DashboardRoutes, TheTokenComesFirstThenGetOnlyThenTheRoutes) {
  int snapshots = 0;
  const SnapshotFn snapshot = [&snapshots] {
    ++snapshots;
    StatusSnapshot s;
    s.step = 42;
    return s;
  };
  const std::string token = "s3cret";
  // Without the token nothing else is looked at: not the method, not a body.
  DashboardRequest post = Request("POST", "/api/status");
  post.has_body = true;
  EXPECT_EQ(DashboardResponse(post, token, snapshot).status(), 401);
  EXPECT_EQ(DashboardResponse(Request("GET", "/nowhere"), token, snapshot).status(), 401);
  EXPECT_EQ(DashboardResponse(Request("GET", "/", "Bearer wrong"), token, snapshot).status(), 401);
  EXPECT_EQ(snapshots, 0);
  const std::string bearer = "Bearer " + token;
  EXPECT_EQ(DashboardResponse(Request("POST", "/api/status", bearer), token, snapshot).status(),
            405);
  DashboardRequest with_body = Request("GET", "/", bearer);
  with_body.has_body = true;
  EXPECT_EQ(DashboardResponse(with_body, token, snapshot).status(), 413);
  EXPECT_EQ(DashboardResponse(Request("GET", "/nowhere", bearer), token, snapshot).status(), 404);
  const Response status =
      DashboardResponse(Request("GET", "/api/status", "", "s3cret"), token, snapshot);
  EXPECT_EQ(status.status(), 200);
  EXPECT_NE(status.body().find("\"step\":42"), std::string::npos) << status.body();
  EXPECT_EQ(snapshots, 1);
  const Response page = DashboardResponse(Request("HEAD", "/", bearer), token, snapshot);
  EXPECT_EQ(page.status(), 200);
  EXPECT_FALSE(page.body().empty());  // libmicrohttpd sends its length, not the body
  EXPECT_EQ(DashboardResponse(Request("GET", "/metrics"), "", snapshot).status(), 200);
}

}  // namespace
}  // namespace mt::http
