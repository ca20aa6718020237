// The hub's count of open connections (hub/grpc/connection_ledger.h):
// caps per address and in all, and room made again once a connection's
// descriptor no longer holds it. Pipes stand in for sockets: the ledger
// only asks what a descriptor holds.
#include "hub/grpc/connection_ledger.h"

#include <gtest/gtest.h>
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

}  // namespace
}  // namespace mt
