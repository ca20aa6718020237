// A real mthub under churn, as anyone who reaches its port could cause:
// cycle after cycle of Join, Hello and going (half of them saying Leave),
// each with a name, device and placement far over the hub's caps. A
// departed worker's slot is freed into bounded counters and every string
// is capped, so the hub's memory, report and log stay the same size
// however many come and go.
//
// The hub takes 256 Joins at once from one address (hub/membership/peer_limits.h), so
// the cycles come from many loopback addresses, each on a socket bound to
// it and handed to gRPC (plaintext: the hub runs --insecure). MT_CHURN_CYCLES
// sets their number (10,000 for the measure; the default keeps CI short).
#include <arpa/inet.h>
#include <grpcpp/create_channel_posix.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "hub.grpc.pb.h"
#include "hub/membership/departed_workers.h"
#include "hub/membership/network_strings.h"
#include "proto/wire.h"
#include "tests/support/cluster_processes.h"
#include "tests/support/files.h"
#include "tests/support/idx_writer.h"
#include "tests/support/process_rss.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using test_support::RssBytes;

constexpr int kCyclesPerAddress = 200;  // within one address's burst of Joins
constexpr size_t kHugeText = 64 << 10;  // 512 times a name's cap
constexpr int64_t kAllowedGrowth = int64_t{50} << 20;

// A gRPC stub on a connection from 127.0.0.<host> to the hub's port.
std::unique_ptr<proto::Hub::Stub> StubFrom(int host, int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  EXPECT_GE(fd, 0);
  sockaddr_in from{}, to{};
  from.sin_family = to.sin_family = AF_INET;
  from.sin_addr.s_addr = htonl(0x7F000000u | static_cast<uint32_t>(host));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  to.sin_port = htons(static_cast<uint16_t>(port));
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from), 0);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
  return proto::Hub::NewStub(grpc::CreateInsecureChannelFromFd("churn", fd));
}

// Join, Hello on a stream, then (if `leave`) Leave, then close. "" when
// every step was accepted, else what was refused and why.
std::string Cycle(proto::Hub::Stub& stub, int i, bool leave) {
  const std::string huge(kHugeText, static_cast<char>('a' + i % 26));
  proto::JoinRequest join;
  join.set_protocol_version(wire::kProtocolVersion);
  join.mutable_device()->set_name(huge);
  join.mutable_device()->set_opencl_device(huge);
  proto::JoinReply reply;
  {
    grpc::ClientContext ctx;
    const grpc::Status s = stub.Join(&ctx, join, &reply);
    if (!s.ok()) return "Join: " + s.error_message();
  }
  grpc::ClientContext ctx;
  auto stream = stub.Train(&ctx);
  proto::WorkerMessage hello;
  hello.mutable_hello()->set_worker_id(reply.worker_id());
  hello.mutable_hello()->set_session_secret(reply.session_secret());
  hello.mutable_hello()->set_placement(huge);
  proto::HubMessage first;  // the model: the hub took the Hello
  if (!stream->Write(hello) || !stream->Read(&first)) {
    stream->WritesDone();
    return "Train: " + stream->Finish().error_message();
  }
  if (leave) {
    grpc::ClientContext leave_ctx;
    proto::LeaveRequest req;
    req.set_worker_id(reply.worker_id());
    req.set_session_secret(reply.session_secret());
    req.set_reason(huge);
    proto::LeaveReply left;
    const grpc::Status s = stub.Leave(&leave_ctx, req, &left);
    if (!s.ok()) return "Leave: " + s.error_message();
  }
  stream->WritesDone();
  ctx.TryCancel();  // as a worker goes: it does not wait for the step to end
  stream->Finish();
  return "";
}

int Cycles() {
  const char* env = std::getenv("MT_CHURN_CYCLES");
  return env && std::atoi(env) > 0 ? std::atoi(env) : 2000;
}

TEST(WorkerChurn, JoinHelloLeaveCyclesLeaveTheHubsMemoryReportAndLogBounded) {
  const fs::path dir = test_support::FreshTempDir("worker-churn");
  test_support::WriteIdxDataset(dir.string(), 256, 64, 5);
  std::unique_ptr<test_support::ChildProcess> hub;
  // Each cycle's worker is the run's one worker while it lasts: the hub
  // sends it the model, then it goes before the step is done.
  const int port =
      test_support::StartHub(hub, dir,
                             {"--insecure", "--workers", "1", "--dataset", dir.string(), "--steps",
                              "20", "--report", (dir / "report.json").string()});
  ASSERT_GT(port, 0);
  const int64_t idle = RssBytes(hub->pid());
  ASSERT_GT(idle, 0);

  const int cycles = Cycles();
  std::unique_ptr<proto::Hub::Stub> stub;
  int64_t grown = 0;
  for (int i = 0; i < cycles; ++i) {
    if (i % kCyclesPerAddress == 0) stub = StubFrom(2 + i / kCyclesPerAddress, port);
    ASSERT_EQ(Cycle(*stub, i, i % 2 == 0), "") << "cycle " << i;
    // Checked as it goes, so a hub that keeps everything fails early
    // rather than eating the machine's memory.
    if (i % 100 == 99 || i == cycles - 1) {
      grown = RssBytes(hub->pid()) - idle;
      ASSERT_LT(grown, kAllowedGrowth) << "after " << i + 1 << " cycles: idle " << idle;
    }
  }
  std::printf("%d cycles: the hub grew by %.1f MB from %.1f MB idle\n", cycles,
              static_cast<double>(grown) / 1e6, static_cast<double>(idle) / 1e6);

  hub->Signal(SIGTERM);
  ASSERT_EQ(hub->Wait(30), 0) << hub->Log();
  const auto report = nlohmann::json::parse(std::ifstream(dir / "report.json"));
  const auto& details = report;  // the run summary with the hub's details merged in
  // All but perhaps the last, whose step may still have been open.
  EXPECT_GE(details["departed_workers"]["workers"], cycles - 1);
  EXPECT_GE(details["departed_workers"]["said_leave"], cycles / 2 - 1);
  ASSERT_LE(details["workers"].size(), DepartedWorkers::kListed + 1);
  for (const auto& w : details["workers"]) {
    EXPECT_LE(w["name"].get<std::string>().size(), kMaxWorkerNameBytes);
    EXPECT_LE(w["placement"].get<std::string>().size(), kMaxPlacementBytes);
    EXPECT_LE(w["left_because"].get<std::string>().size(), kMaxLeaveReasonBytes);
  }
  std::printf("report %ju bytes, log %ju bytes\n",
              static_cast<uintmax_t>(fs::file_size(dir / "report.json")),
              static_cast<uintmax_t>(fs::file_size(dir / "hub.log")));
  // A few KB a listed worker, the first RunMetrics::kMaxBatchChanges
  // changes of the split and the run's own history, whatever the churn.
  EXPECT_LT(fs::file_size(dir / "report.json"), 512u << 10);
  // Lines of joining and going past a minute's share are counted, not written.
  EXPECT_LT(fs::file_size(dir / "hub.log"), 200u << 10);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mt
