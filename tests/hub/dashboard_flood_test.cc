// The dashboard's server against hostile clients, in this process over
// 127.0.0.1 (issue 32, finding 1): an endless request line is cut at the
// head's cap and its connection closed, with the process's memory barely
// moved; an 8 KB head is answered and a 16 KB one refused; a request body
// is refused unread; hundreds of idle connections do
// not keep an authorised GET from its answer; a slow head is closed at its
// deadline; plain HTTP to the HTTPS port is told so; a flood of
// evictions from many addresses cuts no authorised request in flight
// (issue 45, finding 11). Timings stay out: the
// answers must arrive within generous timeouts, nothing more
// (tests/bench/http_flood.py measures).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "core/util/process_stats.h"
#include "hub/http/dashboard_server.h"
#include "tests/support/http_client.h"
#include "tls/certificate.h"

namespace mt {
namespace {

using test_support::HttpGet;
using test_support::Scheme;

constexpr const char* kToken = "flood-token";

DashboardServer::SnapshotFn Snapshot() {
  return [] {
    StatusSnapshot s;
    s.step = 7;
    return s;
  };
}

DashboardTls SelfSigned() {
  const tls::CertificateAndKey pair = tls::GenerateSelfSigned("localhost", {"127.0.0.1"});
  return {pair.cert_pem, pair.key_pem};
}

// A blocking client socket to 127.0.0.1:port whose reads and writes give
// up after `timeout_s`, from `from` (another loopback address, say).
int Connect(int port, double timeout_s = 10, const char* from = nullptr) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (from) {
    sockaddr_in local{};
    local.sin_family = AF_INET;
    inet_pton(AF_INET, from, &local.sin_addr);
    if (bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
      close(fd);
      return -1;
    }
  }
  timeval tv{static_cast<time_t>(timeout_s),
             static_cast<suseconds_t>((timeout_s - static_cast<time_t>(timeout_s)) * 1e6)};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Sends `bytes` whole; false once the peer closed (or the send timed out).
bool SendAll(int fd, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

// What arrives until the peer closes; `closed` says whether it did (not a
// read timeout).
std::string ReadUntilClosed(int fd, bool& closed) {
  std::string got;
  char buffer[4096];
  for (;;) {
    const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n > 0) {
      got.append(buffer, static_cast<size_t>(n));
      continue;
    }
    closed = n == 0 || errno == ECONNRESET;
    return got;
  }
}

TEST(DashboardFlood, AnEndlessRequestLineIsCutAtTheCapAndItsConnectionClosed) {
  DashboardServer server("127.0.0.1", 0, kToken, Snapshot());
  const int64_t rss_before = ReadResidentMemory().current_bytes;
  const int fd = Connect(server.port());
  ASSERT_GE(fd, 0);
  // 64 MiB of one header line that never ends, as long as the server takes it.
  const std::string mib(1 << 20, 'a');
  size_t sent = 0;
  bool open = SendAll(fd, "GET / HTTP/1.1\r\nX-Long: ");
  while (open && sent < (64u << 20)) {
    open = SendAll(fd, mib);
    if (open) sent += mib.size();
  }
  EXPECT_FALSE(open) << "the server took all " << sent << " bytes of a line without an end";
  EXPECT_LT(sent, 32u << 20);
  bool closed = false;
  const std::string answer = ReadUntilClosed(fd, closed);
  EXPECT_TRUE(closed);
  if (!answer.empty()) {
    EXPECT_EQ(answer.rfind("HTTP/1.1 431", 0), 0u) << answer.substr(0, 200);
  }
  close(fd);
  EXPECT_LT(ReadResidentMemory().current_bytes - rss_before, 16 << 20);
  // And the server goes on answering.
  EXPECT_EQ(HttpGet(server.port(), "/api/status", kToken).status, 200);
}

TEST(DashboardFlood, AHeadOf8KBIsAnsweredAndOneOf16KBRefused) {
  // The cap on a request head is libmicrohttpd's memory per connection
  // (hub/http/mhd_daemon.h): 8 KB of fields pass, twice that is 431.
  DashboardServer server("127.0.0.1", 0, kToken, Snapshot());
  for (const auto& [pad, status] :
       {std::pair<size_t, std::string>{8000, "200"}, {16 * 1024, "431"}}) {
    const int fd = Connect(server.port());
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(SendAll(fd, "GET /api/status HTTP/1.1\r\nHost: hub\r\nAuthorization: Bearer " +
                                std::string(kToken) + "\r\nX-Pad: " + std::string(pad, 'p') +
                                "\r\nConnection: close\r\n\r\n"));
    bool closed = false;
    const std::string answer = ReadUntilClosed(fd, closed);
    EXPECT_TRUE(closed) << pad;
    EXPECT_EQ(answer.rfind("HTTP/1.1 " + status, 0), 0u) << pad << ": " << answer.substr(0, 200);
    close(fd);
  }
}

TEST(DashboardFlood, ABodyIsRefusedUnreadAndTheAnswerStillArrives) {
  DashboardServer server("127.0.0.1", 0, kToken, Snapshot());
  for (const auto& [head, status] :
       {std::pair<std::string, std::string>{"POST /api/status", "405"}, {"GET /", "413"}}) {
    const int fd = Connect(server.port());
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(SendAll(fd, head + " HTTP/1.1\r\nAuthorization: Bearer " + kToken +
                                "\r\nContent-Length: 104857600\r\n\r\n" +
                                std::string(1 << 20, 'b')));
    bool closed = false;
    const std::string answer = ReadUntilClosed(fd, closed);
    EXPECT_TRUE(closed) << head;
    EXPECT_EQ(answer.rfind("HTTP/1.1 " + status, 0), 0u) << head << ": " << answer;
    close(fd);
  }
}

TEST(DashboardFlood, FiveHundredIdleConnectionsDoNotLockOutAnAuthorisedGet) {
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  if (files.rlim_cur < 2048 && files.rlim_max > files.rlim_cur) {
    files.rlim_cur = std::min<rlim_t>(files.rlim_max, 2048);
    setrlimit(RLIMIT_NOFILE, &files);
  }
  for (const bool tls : {false, true}) {
    DashboardServer server("127.0.0.1", 0, kToken, Snapshot(), tls ? SelfSigned() : DashboardTls{});
    std::vector<int> idle;
    for (int i = 0; i < 500; ++i) {
      const int fd = Connect(server.port());
      if (fd >= 0) idle.push_back(fd);
    }
    EXPECT_GT(idle.size(), 400u);
    // Some idle ones say half a request and stop.
    for (size_t i = 0; i < idle.size(); i += 5) SendAll(idle[i], "GET / HTTP/1.1\r\n");
    const test_support::HttpReply r =
        HttpGet(server.port(), "/api/status", kToken, tls ? Scheme::kHttps : Scheme::kHttp);
    EXPECT_EQ(r.status, 200) << (tls ? "https" : "http");
    EXPECT_NE(r.body.find("\"step\":7"), std::string::npos) << r.body;
    for (int fd : idle) close(fd);
  }
}

// One GET on a kept-alive connection; the answer's status line, or "".
std::string GetOn(int fd, const std::string& path) {
  if (!SendAll(fd, "GET " + path + " HTTP/1.1\r\nAuthorization: Bearer " + kToken + "\r\n\r\n"))
    return "";
  std::string got;
  char buffer[4096];
  while (got.find("\r\n\r\n") == std::string::npos) {
    const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return "";
    got.append(buffer, static_cast<size_t>(n));
  }
  // The whole body too, so the next answer on this connection starts clean.
  const size_t head_end = got.find("\r\n\r\n") + 4;
  const size_t length_at = got.find("Content-Length: ");
  const size_t length = length_at < head_end ? std::stoul(got.substr(length_at + 16)) : size_t{0};
  while (got.size() < head_end + length) {
    const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return "";
    got.append(buffer, static_cast<size_t>(n));
  }
  return got.substr(0, got.find("\r\n"));
}

TEST(DashboardFlood, AFloodFromOneAddressDoesNotCloseAnothersConnection) {
  DashboardServer server("127.0.0.1", 0, kToken, Snapshot());
  const int viewer = Connect(server.port(), 10, "127.0.0.2");
  if (viewer < 0) GTEST_SKIP() << "cannot bind 127.0.0.2 here";
  ASSERT_EQ(GetOn(viewer, "/api/status"), "HTTP/1.1 200 OK");
  // 300 idle connections from 127.0.0.1: it churns its own share.
  std::vector<int> idle;
  for (int i = 0; i < 300; ++i) {
    const int fd = Connect(server.port());
    if (fd >= 0) idle.push_back(fd);
  }
  // The viewer's kept-alive connection is still there, and answered.
  EXPECT_EQ(GetOn(viewer, "/api/status"), "HTTP/1.1 200 OK");
  close(viewer);
  for (int fd : idle) close(fd);
}

TEST(DashboardFlood, AnEvictionFloodFromManyAddressesCutsNoAuthorisedRequest) {
  // Issue 45, finding 11: silent connections from 16-128 addresses, opened
  // as fast as the hub accepts them, made it close 14-38% of authorised
  // GETs mid-request (a connection's progress was its accept time until
  // an answer completed). Now a silent socket goes before one that spoke,
  // and one being answered never goes.
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  if (files.rlim_cur < 2048 && files.rlim_max > files.rlim_cur) {
    files.rlim_cur = std::min<rlim_t>(files.rlim_max, 2048);
    setrlimit(RLIMIT_NOFILE, &files);
  }
  DashboardServer server("127.0.0.1", 0, kToken, Snapshot(), SelfSigned());
  const int probe = Connect(server.port(), 10, "127.0.0.2");
  if (probe < 0) GTEST_SKIP() << "cannot bind 127.0.0.2 here";
  close(probe);
  std::atomic<bool> stop{false};
  std::atomic<int> opened{0};
  std::thread flood([&] {
    std::vector<int> ring(512, -1);
    for (size_t i = 0; !stop; ++i) {
      const std::string from = "127.0.0." + std::to_string(2 + i % 32);
      int& slot = ring[i % ring.size()];
      if (slot >= 0) close(slot);
      slot = Connect(server.port(), 1, from.c_str());
      if (slot >= 0) ++opened;
    }
    for (int fd : ring)
      if (fd >= 0) close(fd);
  });
  int failed = 0;
  constexpr int kGets = 40;
  for (int i = 0; i < kGets; ++i)
    failed += HttpGet(server.port(), "/api/status", kToken, Scheme::kHttps).status != 200;
  stop = true;
  flood.join();
  // The table (64) was churned many times over while the GETs ran.
  EXPECT_GT(opened.load(), 4 * 64);
  EXPECT_EQ(failed, 0) << "of " << kGets << " authorised GETs, with " << opened.load()
                       << " flooding connections";
}

TEST(DashboardFlood, AHeadTrickledByteByByteIsClosedAtItsDeadline) {
  DashboardServer server("127.0.0.1", 0, kToken, Snapshot());
  const int fd = Connect(server.port(), 1);
  ASSERT_GE(fd, 0);
  const auto start = std::chrono::steady_clock::now();
  bool open = SendAll(fd, "GET / HTTP/1.1\r\n");
  // A byte every 200 ms keeps the socket busy but never ends the head.
  while (open && std::chrono::steady_clock::now() - start < std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    char c = 0;
    const ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) open = false;
    if (open) open = SendAll(fd, "X");
  }
  EXPECT_FALSE(open) << "still open after 30 s";
  close(fd);
}

TEST(DashboardFlood, PipelinedRequestsAreAllAnsweredInTurn) {
  // More requests in one send than the server answers in one turn of its
  // loop: it must come back for the rest without waiting for more bytes.
  DashboardServer server("127.0.0.1", 0, "", Snapshot());
  std::string requests;
  for (int i = 0; i < 100; ++i) requests += "GET /nowhere HTTP/1.1\r\n\r\n";
  requests += "GET /nowhere HTTP/1.1\r\nConnection: close\r\n\r\n";
  const int fd = Connect(server.port(), 3);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(SendAll(fd, requests));
  bool closed = false;
  const std::string answers = ReadUntilClosed(fd, closed);
  close(fd);
  EXPECT_TRUE(closed);
  size_t count = 0;
  for (size_t at = answers.find("HTTP/1.1 404"); at != std::string::npos;
       at = answers.find("HTTP/1.1 404", at + 1))
    ++count;
  EXPECT_EQ(count, 101u);
}

TEST(DashboardFlood, PlainHttpToTheHttpsPortIsToldToUseHttps) {
  DashboardServer server("127.0.0.1", 0, kToken, Snapshot(), SelfSigned());
  EXPECT_TRUE(server.tls());
  const test_support::HttpReply r = HttpGet(server.port(), "/", kToken, Scheme::kHttp);
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("https://"), std::string::npos) << r.body;
  EXPECT_EQ(HttpGet(server.port(), "/", kToken, Scheme::kHttps).status, 200);
}

}  // namespace
}  // namespace mt
