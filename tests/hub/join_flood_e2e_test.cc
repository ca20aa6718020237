// A real mthub flooded with Joins that never open their stream (as anyone
// who reaches its port could): the hub admits a bounded number, holds no
// gradient buffer for them and stays within 100 MB of its idle memory.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "hub.grpc.pb.h"
#include "hub/membership/membership.h"
#include "proto/wire.h"
#include "tests/support/cluster_processes.h"
#include "tests/support/files.h"
#include "tests/support/idx_writer.h"
#include "tests/support/process_rss.h"
#include "tls/channel_credentials.h"

namespace mt {
namespace {

namespace fs = std::filesystem;

using test_support::RssBytes;

TEST(JoinFlood, TwoThousandJoinsLeaveTheHubWithinAHundredMegabytesOfIdle) {
  const fs::path dir = test_support::FreshTempDir("join-flood");
  test_support::WriteIdxDataset(dir.string(), 256, 64, 5);
  std::unique_ptr<test_support::ChildProcess> hub;
  const int port = test_support::StartHub(
      hub, dir,
      {"--workers", "1", "--dataset", dir.string(), "--steps", "20", "--log-every", "60"});
  ASSERT_GT(port, 0);
  const std::string target = "127.0.0.1:" + std::to_string(port);
  auto stub = proto::Hub::NewStub(grpc::CreateChannel(
      target, tls::MakeChannelSecurity(tls::ClientOptions{}, target).credentials));
  const int64_t idle = RssBytes(hub->pid());
  ASSERT_GT(idle, 0);

  int admitted = 0, busy = 0;
  for (int i = 0; i < 2000; ++i) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    proto::JoinRequest req;
    req.set_protocol_version(wire::kProtocolVersion);
    req.mutable_device()->set_name("flood");
    proto::JoinReply reply;
    const grpc::Status s = stub->Join(&ctx, req, &reply);
    if (s.ok())
      ++admitted;
    else if (s.error_code() == grpc::StatusCode::UNAVAILABLE)
      ++busy;
  }
  const int64_t flooded = RssBytes(hub->pid());
  // All from 127.0.0.1: one peer holds at most its share of pending joins
  // (hub/membership/membership.h); the rest are told to come back, as an honest worker
  // does with backoff.
  EXPECT_EQ(admitted, Membership::kMaxPendingJoinsPerHost);
  EXPECT_EQ(busy, 2000 - Membership::kMaxPendingJoinsPerHost);
  EXPECT_LT(flooded - idle, int64_t{100} << 20) << "idle " << idle << ", after " << flooded;

  // An honest worker from elsewhere would get in; from this host it is told
  // to retry (its pending joins are full, and 2,000 Joins have emptied its
  // bucket: hub/membership/peer_limits.h), naming the host.
  grpc::ClientContext ctx;
  proto::JoinRequest req;
  req.set_protocol_version(wire::kProtocolVersion);
  proto::JoinReply reply;
  const grpc::Status s = stub->Join(&ctx, req, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_NE(s.error_message().find("127.0.0.1"), std::string::npos) << s.error_message();
  hub->Signal(SIGTERM);
  EXPECT_EQ(hub->Wait(30), 0) << hub->Log();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mt
