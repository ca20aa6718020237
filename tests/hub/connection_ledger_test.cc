// The hub's count of open connections (hub/grpc/connection_ledger.h):
// caps per address and in all, room made again once a connection's
// descriptor no longer holds it, and an address's cap that counts only
// connections holding no worker, its idle ones cut for a newcomer. Pipes
// stand in for sockets where the ledger only asks what a descriptor holds;
// socket pairs where it cuts one.
#include "hub/grpc/connection_ledger.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <vector>

namespace mt {
namespace {

// A fresh descriptor (one end of a pipe), closed with the fixture.
class Descriptors {
 public:
  ~Descriptors() {
    for (int fd : open_) close(fd);
  }
  int Open() {
    int ends[2];
    EXPECT_EQ(pipe(ends), 0);
    open_.push_back(ends[0]);
    open_.push_back(ends[1]);
    return ends[0];
  }

 private:
  std::vector<int> open_;
};

const auto kNow = ConnectionLedger::Clock::now();

TEST(ConnectionCaps, LeaveRoomUnderTheLimitAndNeverGiveOneAddressHalf) {
  const ConnectionCaps small = CapsFor(256, 64);
  EXPECT_LT(small.total, 256 - 100);
  EXPECT_LE(small.per_address, small.total / 2);
  const ConnectionCaps big = CapsFor(65536, 64);
  EXPECT_GT(big.total, 50000);
  EXPECT_EQ(big.per_address, 128);  // two per worker the run admits
  // A local cluster of 1000 simulated workers on one address fits.
  EXPECT_GE(CapsFor(65536, 1000).per_address, 2000);
}

TEST(ConnectionLedger, RefusesBeyondTheCapPerAddressButNotOtherAddresses) {
  Descriptors fds;
  ConnectionLedger ledger({10, 3});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(ledger.Admit(fds.Open(), "10.0.0.9", kNow), "");
  EXPECT_NE(ledger.Admit(fds.Open(), "10.0.0.9", kNow), "");
  EXPECT_EQ(ledger.Admit(fds.Open(), "10.0.0.2", kNow), "");
  EXPECT_EQ(ledger.open_from("10.0.0.9"), 3);
  EXPECT_EQ(ledger.open(), 4);
}

TEST(ConnectionLedger, RefusesBeyondTheTotalCap) {
  Descriptors fds;
  ConnectionLedger ledger({4, 2});
  for (const char* a : {"a", "a", "b", "b"}) EXPECT_EQ(ledger.Admit(fds.Open(), a, kNow), "");
  EXPECT_NE(ledger.Admit(fds.Open(), "c", kNow), "");
}

TEST(ConnectionLedger, AConnectionClosedMakesRoomAgain) {
  Descriptors fds;
  ConnectionLedger ledger({10, 2});
  int first[2];
  ASSERT_EQ(pipe(first), 0);
  EXPECT_EQ(ledger.Admit(first[0], "a", kNow), "");
  EXPECT_EQ(ledger.Admit(fds.Open(), "a", kNow), "");
  EXPECT_NE(ledger.Admit(fds.Open(), "a", kNow), "");
  // gRPC closes one; the descriptor now holds something else.
  close(first[0]);
  close(first[1]);
  fds.Open();
  EXPECT_EQ(ledger.Admit(fds.Open(), "a", kNow + std::chrono::seconds(1)), "");
  EXPECT_EQ(ledger.open_from("a"), 2);
}

TEST(ConnectionLedger, ADescriptorHandedOutAgainIsANewConnection) {
  ConnectionLedger ledger({10, 1});
  int ends[2];
  ASSERT_EQ(pipe(ends), 0);
  EXPECT_EQ(ledger.Admit(ends[0], "a", kNow), "");
  close(ends[0]);
  int again[2];
  ASSERT_EQ(pipe(again), 0);
  ASSERT_EQ(again[0], ends[0]);  // the lowest free descriptor
  // Within the sweep interval: the reused descriptor alone tells.
  EXPECT_EQ(ledger.Admit(again[0], "a", kNow), "");
  EXPECT_EQ(ledger.open(), 1);
  close(again[0]);
  close(again[1]);
  close(ends[1]);
}

TEST(ConnectionLedger, ConnectionsHoldingAWorkerLeaveTheirAddresssCount) {
  // Issue 45, finding 10: an address's idle channels filled its cap and its
  // honest workers could not connect.
  Descriptors fds;
  ConnectionLedger ledger({10, 2});
  EXPECT_EQ(ledger.Admit(fds.Open(), "10.0.0.9", kNow, 1001), "");
  EXPECT_EQ(ledger.Admit(fds.Open(), "10.0.0.9", kNow, 1002), "");
  ledger.Mark("10.0.0.9", 1001, ConnectionLedger::Stage::kWorker);
  ledger.Mark("10.0.0.9", 1002, ConnectionLedger::Stage::kCalls);
  ledger.Mark("10.0.0.9", 1002, ConnectionLedger::Stage::kSilent);  // never back
  ledger.Mark("10.0.0.8", 1002, ConnectionLedger::Stage::kWorker);  // another peer: nobody
  EXPECT_EQ(ledger.open_from("10.0.0.9"), 1);
  EXPECT_EQ(ledger.Admit(fds.Open(), "10.0.0.9", kNow, 1003), "");
  EXPECT_EQ(ledger.open(), 3);
  // The total still counts every connection.
  ConnectionLedger small({2, 2});
  EXPECT_EQ(small.Admit(fds.Open(), "a", kNow, 1), "");
  small.Mark("a", 1, ConnectionLedger::Stage::kWorker);
  EXPECT_EQ(small.Admit(fds.Open(), "a", kNow, 2), "");
  EXPECT_NE(small.Admit(fds.Open(), "a", kNow, 3), "");
}

TEST(ConnectionLedger, AnAddressAtItsCapCutsItsIdlestConnectionForANewcomer) {
  int calls[2], silent[2], worker[2];
  for (int* pair : {calls, silent, worker}) ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  Descriptors fds;
  ConnectionLedger ledger({10, 2});
  EXPECT_EQ(ledger.Admit(worker[0], "a", kNow, 1), "");
  ledger.Mark("a", 1, ConnectionLedger::Stage::kWorker);
  EXPECT_EQ(ledger.Admit(calls[0], "a", kNow, 2), "");
  EXPECT_EQ(ledger.Admit(silent[0], "a", kNow, 3), "");
  ledger.Mark("a", 2, ConnectionLedger::Stage::kCalls);
  // Full: the one that carried calls but holds no worker goes first, at
  // once; its peer sees the end.
  EXPECT_EQ(ledger.Admit(fds.Open(), "a", kNow + std::chrono::milliseconds(100), 4), "");
  char byte = 0;
  EXPECT_EQ(recv(calls[1], &byte, 1, MSG_DONTWAIT), 0);
  // A silent one within its grace (a handshake under way) is not cut: the
  // newcomer is refused; past its grace it makes room.
  const auto soon = kNow + ConnectionLedger::kPendingGrace / 2;
  EXPECT_NE(ledger.Admit(fds.Open(), "a", soon, 5), "");
  EXPECT_EQ(ledger.Admit(fds.Open(), "a", kNow + 2 * ConnectionLedger::kPendingGrace, 6), "");
  EXPECT_EQ(recv(silent[1], &byte, 1, MSG_DONTWAIT), 0);
  // A worker's connection is never cut.
  EXPECT_EQ(recv(worker[1], &byte, 1, MSG_DONTWAIT), -1);
  EXPECT_EQ(ledger.cut(), 2);
  for (int* pair : {calls, silent, worker}) {
    close(pair[0]);
    close(pair[1]);
  }
}

TEST(ConnectionLedger, ReadsTheAddressAndPortOfAGrpcPeer) {
  std::string address;
  int port = 0;
  ASSERT_TRUE(ParseGrpcPeer("ipv4:10.0.0.5:43122", &address, &port));
  EXPECT_EQ(address, "10.0.0.5");
  EXPECT_EQ(port, 43122);
  ASSERT_TRUE(ParseGrpcPeer("ipv6:[::1]:5000", &address, &port));
  EXPECT_EQ(address, "::1");
  EXPECT_EQ(port, 5000);
  ASSERT_TRUE(ParseGrpcPeer("ipv6:[::ffff:127.0.0.1]:7", &address, &port));
  EXPECT_EQ(address, "127.0.0.1");
  for (const char* bad : {"", "unix:/tmp/x", "ipv4:1.2.3.4", "ipv4:1.2.3.4:", "ipv4::80",
                          "ipv6:[::1]", "ipv4:1.2.3.4:99999", "ipv4:1.2.3.4:8a"})
    EXPECT_FALSE(ParseGrpcPeer(bad, &address, &port)) << bad;
}

}  // namespace
}  // namespace mt
