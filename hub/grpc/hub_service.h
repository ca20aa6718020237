// The hub's gRPC face: a thin adapter that forwards every call to the step
// coordinator and turns its answers (and any exception) into gRPC statuses.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "hub.grpc.pb.h"
#include "hub/grpc/connection_gate.h"
#include "hub/grpc/train_stream.h"

namespace mt {

class StepCoordinator;

class HubService final : public proto::Hub::WithRawCallbackMethod_Train<proto::Hub::Service> {
 public:
  // `ledger`: told what each connection carried (its per-address cap
  // leaves out those holding a worker).
  HubService(StepCoordinator& coordinator, std::atomic<int64_t>* write_cpu_ns,
             HelloDeadlines* hello_deadlines, ConnectionLedger* ledger)
      : coordinator_(coordinator),
        write_cpu_ns_(write_cpu_ns),
        hello_deadlines_(hello_deadlines),
        ledger_(ledger) {}

  grpc::Status Join(grpc::ServerContext* context, const proto::JoinRequest* request,
                    proto::JoinReply* reply) override;
  // Raw bytes, so that one serialised broadcast serves every worker.
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* Train(
      grpc::CallbackServerContext* context) override;
  grpc::Status Leave(grpc::ServerContext* context, const proto::LeaveRequest* request,
                     proto::LeaveReply* reply) override;

 private:
  StepCoordinator& coordinator_;
  std::atomic<int64_t>* write_cpu_ns_;
  HelloDeadlines* hello_deadlines_;
  ConnectionLedger* ledger_;
};

// The listening server: binds on Start-up and shuts down when destroyed.
class HubServer {
 public:
  // Throws when the address cannot be bound. A Train stream that has not
  // said Hello after `hello_timeout` is closed. `max_workers` sizes the
  // connections one address may hold (hub/grpc/connection_ledger.h).
  HubServer(StepCoordinator& coordinator, const std::string& bind, int port,
            std::shared_ptr<grpc::ServerCredentials> credentials,
            std::atomic<int64_t>* write_cpu_ns, std::chrono::milliseconds hello_timeout,
            int max_workers);
  ~HubServer();
  int port() const { return gate_->port(); }

 private:
  HelloDeadlines hello_deadlines_;  // first: the streams use it until the server is down
  ConnectionLedger ledger_;         // so does the service
  HubService service_;
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<ConnectionGate> gate_;  // last: stops handing connections over first
};

}  // namespace mt
