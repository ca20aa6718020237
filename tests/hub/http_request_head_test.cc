// The dashboard server's pure parts: the request head parser and its
// limits, which connection a full table closes, and what the routes answer
// (the token before anything else). No sockets here; the server under a
// flood is tests/hub/dashboard_flood_test.cc.
#include <gtest/gtest.h>

#include <string>

#include "hub/http/connection_limits.h"
#include "hub/http/dashboard_routes.h"
#include "hub/http/request_head.h"

namespace mt::http {
namespace {

using Outcome = HeadParse::Outcome;

HeadParse Parse(const std::string& bytes, RequestHead& head) {
  return ParseRequestHead(bytes, head);
}

TEST(RequestHead, ParsesARequestAndSaysWhereItEnds) {
  const std::string bytes =
      "GET /api/status?token=a%20b+c&x=1 HTTP/1.1\r\nHost: hub\r\nAuthorization: Bearer t0k\r\n"
      "\r\nGET / HTTP/1.1\r\n";
  RequestHead head;
  const HeadParse p = Parse(bytes, head);
  ASSERT_EQ(p.outcome, Outcome::kComplete) << p.why;
  EXPECT_EQ(bytes.substr(p.head_bytes), "GET / HTTP/1.1\r\n");  // the next, pipelined
  EXPECT_EQ(head.method, "GET");
  EXPECT_EQ(head.path, "/api/status");
  EXPECT_EQ(head.authorization, "Bearer t0k");
  EXPECT_EQ(QueryParameter(head.query, "token"), "a b c");
  EXPECT_EQ(QueryParameter(head.query, "x"), "1");
  EXPECT_EQ(QueryParameter(head.query, "y"), "");
  EXPECT_TRUE(head.keep_alive);
  EXPECT_FALSE(head.has_body);
}

TEST(RequestHead, IncompleteUntilTheBlankLineAndBareLineFeedsWork) {
  RequestHead head;
  EXPECT_EQ(Parse("GET / HTTP/1.1\r\nHost: x\r\n", head).outcome, Outcome::kIncomplete);
  EXPECT_EQ(Parse("GET / HTTP/1.1\r\nHost: x\r\n\r", head).outcome, Outcome::kIncomplete);
  EXPECT_EQ(Parse("\r\n\r\nGET / HTTP/1.0\n\n", head).outcome, Outcome::kComplete);
  EXPECT_FALSE(head.keep_alive);  // HTTP/1.0 without keep-alive
  // A few stray line ends first, not a stream of them.
  const std::string strays(kMaxEmptyLinesFirst, '\n');
  EXPECT_EQ(Parse(strays, head).outcome, Outcome::kIncomplete);
  EXPECT_EQ(Parse(strays + "\nGET / HTTP/1.1\r\n\r\n", head).status, 400);
  EXPECT_EQ(Parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", head).outcome,
            Outcome::kComplete);
  EXPECT_TRUE(head.keep_alive);
  EXPECT_EQ(Parse("GET / HTTP/1.1\r\nConnection: TE, close\r\n\r\n", head).outcome,
            Outcome::kComplete);
  EXPECT_FALSE(head.keep_alive);
}

TEST(RequestHead, AnEndlessLineIsRefusedAtTheCapNotBuffered) {
  RequestHead head;
  // The request line never ends: 414 as soon as the cap is reached.
  std::string line = "GET /" + std::string(kMaxHeadBytes, 'a');
  HeadParse p = Parse(line, head);
  EXPECT_EQ(p.outcome, Outcome::kRefused);
  EXPECT_EQ(p.status, 414);
  EXPECT_EQ(Parse(line.substr(0, kMaxHeadBytes - 1), head).outcome, Outcome::kIncomplete);
  // A header that never ends, or too many of them: 431.
  p = Parse("GET / HTTP/1.1\r\nX: " + std::string(kMaxHeadBytes, 'b'), head);
  EXPECT_EQ(p.status, 431);
  std::string many = "GET / HTTP/1.1\r\n";
  for (size_t i = 0; i <= kMaxHeaderFields; ++i) many += "X: 1\r\n";
  p = Parse(many + "\r\n", head);
  EXPECT_EQ(p.outcome, Outcome::kRefused);
  EXPECT_EQ(p.status, 431);
  // A head of exactly the cap is fine.
  std::string full = "GET / HTTP/1.1\r\nX: ";
  full += std::string(kMaxHeadBytes - full.size() - 4, 'c') + "\r\n\r\n";
  ASSERT_EQ(full.size(), kMaxHeadBytes);
  EXPECT_EQ(Parse(full, head).outcome, Outcome::kComplete);
}

TEST(RequestHead, BodiesAreSeenFromTheHead) {
  RequestHead head;
  ASSERT_EQ(Parse("POST / HTTP/1.1\r\nContent-Length: 104857600\r\n\r\n", head).outcome,
            Outcome::kComplete);
  EXPECT_TRUE(head.has_body);
  ASSERT_EQ(Parse("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", head).outcome,
            Outcome::kComplete);
  EXPECT_TRUE(head.has_body);
  ASSERT_EQ(Parse("GET / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", head).outcome, Outcome::kComplete);
  EXPECT_FALSE(head.has_body);
  EXPECT_EQ(Parse("GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", head).status,
            400);
  EXPECT_EQ(Parse("GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", head).status, 400);
}

TEST(RequestHead, MalformedHeadsAreRefused) {
  RequestHead head;
  for (const char* bad :
       {"GET\r\n\r\n", "GET / HTTP/1.1 x\r\n\r\n", "GET http://x/ HTTP/1.1\r\n\r\n",
        "G(T / HTTP/1.1\r\n\r\n", "GET / HTTQ/1.1\r\n\r\n", "GET / HTTP/1.1\r\n folded\r\n\r\n",
        "GET / HTTP/1.1\r\nNo colon\r\n\r\n", "GET / HTTP/1.1\r\nX: a\x01z\r\n\r\n",
        "GET / HTTP/1.1\r\nAuthorization: a\r\nAuthorization: b\r\n\r\n"}) {
    const HeadParse p = Parse(bad, head);
    EXPECT_EQ(p.outcome, Outcome::kRefused) << bad;
    EXPECT_EQ(p.status, 400) << bad;
  }
  EXPECT_EQ(Parse("GET / HTTP/2.0\r\n\r\n", head).status, 505);
}

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

RequestHead Request(const std::string& method, const std::string& target,
                    const std::string& authorization = "") {
  RequestHead head;
  const std::string bytes =
      method + " " + target + " HTTP/1.1\r\n" +
      (authorization.empty() ? "" : "Authorization: " + authorization + "\r\n") + "\r\n";
  EXPECT_EQ(ParseRequestHead(bytes, head).outcome, Outcome::kComplete);
  return head;
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
  RequestHead post = Request("POST", "/api/status");
  post.has_body = true;
  EXPECT_EQ(DashboardResponse(post, token, snapshot).status(), 401);
  EXPECT_EQ(DashboardResponse(Request("GET", "/nowhere"), token, snapshot).status(), 401);
  EXPECT_EQ(DashboardResponse(Request("GET", "/", "Bearer wrong"), token, snapshot).status(), 401);
  EXPECT_EQ(snapshots, 0);
  const std::string bearer = "Bearer " + token;
  EXPECT_EQ(DashboardResponse(Request("POST", "/api/status", bearer), token, snapshot).status(),
            405);
  RequestHead with_body = Request("GET", "/", bearer);
  with_body.has_body = true;
  EXPECT_EQ(DashboardResponse(with_body, token, snapshot).status(), 413);
  EXPECT_EQ(DashboardResponse(Request("GET", "/nowhere", bearer), token, snapshot).status(), 404);
  const Response status =
      DashboardResponse(Request("GET", "/api/status?token=s3cret"), token, snapshot);
  EXPECT_EQ(status.status(), 200);
  EXPECT_NE(status.body().find("\"step\":42"), std::string::npos) << status.body();
  EXPECT_EQ(snapshots, 1);
  const Response page = DashboardResponse(Request("HEAD", "/", bearer), token, snapshot);
  EXPECT_EQ(page.status(), 200);
  EXPECT_NE(page.Head(true).find("Content-Length: " + std::to_string(page.body().size())),
            std::string::npos);
  EXPECT_EQ(DashboardResponse(Request("GET", "/metrics"), "", snapshot).status(), 200);
}

}  // namespace
}  // namespace mt::http
