// The hub's port and file descriptors as a stranger meets them: a second
// mthub on a taken port stops instead of sharing the workers; a flood of
// idle connections, more than the hub has descriptors for, leaves room for
// a worker from elsewhere to join and train; and idle channels from the
// worker's own address, more than that address may hold, do not lock it
// out (issue 45, finding 10).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "hub.grpc.pb.h"
#include "tests/support/cluster_processes.h"
#include "tests/support/events.h"
#include "tests/support/files.h"
#include "tests/support/idx_writer.h"
#include "tests/support/subprocess.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using test_support::ChildProcess;

class ConnectionsE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_support::FreshTempDir("connections-e2e");
    test_support::WriteIdxDataset(dir_.string(), 512, 128, 3);
  }
  void TearDown() override {
    for (int fd : flood_) close(fd);
    fs::remove_all(dir_);
  }
  std::vector<std::string> HubArgs(int workers) const {
    return {"--workers",
            std::to_string(workers),
            "--dataset",
            dir_.string(),
            "--steps",
            "4",
            "--insecure",
            "--report",
            (dir_ / "hub.json").string(),
            "--min-workers",
            std::to_string(workers)};
  }
  // Opens `count` TCP connections from `from` to 127.0.0.1:port and leaves
  // them open; every other one says HTTP/2's preface and nothing more.
  // Returns how many connected.
  int Flood(const char* from, int port, int count) {
    int connected = 0;
    for (int i = 0; i < count; ++i) {
      const int fd = socket(AF_INET, SOCK_STREAM, 0);
      if (fd < 0) break;
      flood_.push_back(fd);
      sockaddr_in source{};
      source.sin_family = AF_INET;
      inet_pton(AF_INET, from, &source.sin_addr);
      if (bind(fd, reinterpret_cast<sockaddr*>(&source), sizeof(source)) != 0) break;
      sockaddr_in hub{};
      hub.sin_family = AF_INET;
      hub.sin_port = htons(static_cast<uint16_t>(port));
      inet_pton(AF_INET, "127.0.0.1", &hub.sin_addr);
      if (connect(fd, reinterpret_cast<sockaddr*>(&hub), sizeof(hub)) != 0) continue;
      ++connected;
      static const char kPreface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
      if (i % 2 == 1) (void)!send(fd, kPreface, sizeof(kPreface) - 1, MSG_NOSIGNAL);
    }
    return connected;
  }
  fs::path dir_;
  std::vector<int> flood_;
};

TEST_F(ConnectionsE2e, ASecondHubOnATakenPortExitsOneAndTheFirstKeepsItsWorkers) {
  std::unique_ptr<ChildProcess> first;
  const int port = test_support::StartHub(first, dir_, HubArgs(2));
  ASSERT_GT(port, 0);
  // The same command again, as a user who forgot the first would type it.
  std::vector<std::string> argv = {test_support::BinaryPath("hub/mthub"),
                                   "--bind",
                                   "127.0.0.1",
                                   "--port",
                                   std::to_string(port),
                                   "--http-port",
                                   "0"};
  for (const std::string& a : HubArgs(2)) argv.push_back(a);
  ChildProcess second(argv, (dir_ / "hub2.log").string());
  EXPECT_EQ(second.Wait(30), 1) << second.Log();

  // Both workers reach the first hub, which trains with them.
  auto a = test_support::StartWorker(dir_, "a", port, {"--insecure"});
  auto b = test_support::StartWorker(dir_, "b", port, {"--insecure"});
  EXPECT_EQ(a->Wait(120), 0) << a->Log();
  EXPECT_EQ(b->Wait(120), 0) << b->Log();
  EXPECT_EQ(first->Wait(60), 0) << first->Log();
  EXPECT_EQ(test_support::CountEvents(test_support::EventsOf(dir_, "hub"), "worker_joined"), 2);
}

TEST_F(ConnectionsE2e, IdleConnectionsBeyondTheOpenFileLimitDoNotLockWorkersOut) {
  // A hub with few descriptors, so that the flood is cheap.
  constexpr int kOpenFiles = 256;
  std::unique_ptr<ChildProcess> hub;
  const int port =
      test_support::StartHub(hub, dir_, HubArgs(1), 0, "hub.log",
                             {"/usr/bin/prlimit", "--nofile=" + std::to_string(kOpenFiles), "--"});
  ASSERT_GT(port, 0);
  // From another loopback address than the worker's: a stranger elsewhere.
  const int connected = Flood("127.0.0.2", port, kOpenFiles + 100);
  ASSERT_GT(connected, kOpenFiles / 2) << "cannot connect from 127.0.0.2";

  auto worker =
      test_support::StartWorker(dir_, "honest", port, {"--insecure", "--connect-timeout", "30"});
  EXPECT_EQ(worker->Wait(120), 0) << worker->Log();
  EXPECT_EQ(hub->Wait(60), 0) << hub->Log();
  EXPECT_EQ(test_support::CountEvents(test_support::EventsOf(dir_, "hub"), "worker_joined"), 1);
}

TEST_F(ConnectionsE2e, IdleChannelsFromTheWorkersOwnAddressDoNotLockItOut) {
  // Issue 45, finding 10: idle channels filled 127.0.0.1's cap of 128
  // connections, the honest worker there failed to connect and the run
  // trained 0 steps. Now a connection that carried calls but holds no
  // worker (or one still silent after a grace) makes room for a newcomer
  // from its address.
  std::unique_ptr<ChildProcess> hub;
  const int port = test_support::StartHub(hub, dir_, HubArgs(1));
  ASSERT_GT(port, 0);
  const std::string target = "127.0.0.1:" + std::to_string(port);
  std::vector<std::shared_ptr<grpc::Channel>> idle;
  for (int i = 0; i < 160; ++i) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a connection of its own
    auto channel = grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
    auto stub = proto::Hub::NewStub(channel);
    // A Train stream that never says Hello, given up at once; the channel
    // and its connection stay.
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    auto stream = stub->Train(&ctx);
    stream->WritesDone();
    ctx.TryCancel();
    (void)stream->Finish();
    idle.push_back(channel);
  }
  auto worker =
      test_support::StartWorker(dir_, "honest", port, {"--insecure", "--connect-timeout", "20"});
  EXPECT_EQ(worker->Wait(120), 0) << worker->Log();
  EXPECT_EQ(hub->Wait(60), 0) << hub->Log();
  EXPECT_EQ(test_support::CountEvents(test_support::EventsOf(dir_, "hub"), "worker_joined"), 1);
}

}  // namespace
}  // namespace mt
