// A hub that keeps sending what the worker refuses: the worker rejoins a
// few times, as after any lost hub, then stops with the reason instead of
// rejoining for ever. A real gRPC hub over 127.0.0.1 that answers every
// Hello with a state chunk whose offset lies beyond the model.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include "hub.grpc.pb.h"
#include "tests/support/files.h"
#include "tests/support/scripted_hub.h"
#include "worker/worker_config.h"
#include "worker/worker_control.h"

namespace mt {
namespace {

class BrokenHub final : public proto::Hub::Service {
 public:
  explicit BrokenHub(proto::JoinReply reply) : reply_(std::move(reply)) {}
  grpc::Status Join(grpc::ServerContext*, const proto::JoinRequest*,
                    proto::JoinReply* reply) override {
    ++joins;
    *reply = reply_;
    return grpc::Status::OK;
  }
  grpc::Status Train(
      grpc::ServerContext*,
      grpc::ServerReaderWriter<proto::HubMessage, proto::WorkerMessage>* stream) override {
    proto::WorkerMessage hello;
    if (!stream->Read(&hello)) return grpc::Status::OK;
    proto::HubMessage bad;
    bad.mutable_state()->set_offset(int64_t{1} << 40);  // far beyond the model
    bad.mutable_state()->add_values(1.0f);
    stream->Write(bad);
    proto::WorkerMessage ignored;
    while (stream->Read(&ignored)) {
    }
    return grpc::Status::OK;
  }
  std::atomic<int> joins{0};

 private:
  proto::JoinReply reply_;
};

TEST(BadHubReconnect, AWorkerStopsAfterAFewSessionsOfRefusedMessages) {
  const std::filesystem::path dir = test_support::FreshTempDir("bad-hub");
  test_support::ScriptedWorker scripted(dir.string());
  BrokenHub hub(scripted.join());
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&hub);
  auto server = builder.BuildAndStart();
  ASSERT_GT(port, 0);

  WorkerConfig cfg;
  cfg.hub = "127.0.0.1:" + std::to_string(port);
  cfg.tls.insecure = true;
  cfg.connect_timeout_seconds = 30;
  cfg.read_system_device_state = false;
  WorkerControl control;
  const auto start = std::chrono::steady_clock::now();
  try {
    RunWorker(cfg, control);
    ADD_FAILURE() << "the worker went on with a hub that only sends bad messages";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("3 sessions in a row"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("hub sent"));
  }
  EXPECT_EQ(hub.joins.load(), 3);
  // Backoff 0.5 s then 1 s between the sessions: bounded, well under the
  // connect timeout.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  server->Shutdown(std::chrono::system_clock::now());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace mt
