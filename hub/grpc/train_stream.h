// One worker's Train stream on the hub, as a gRPC callback reactor over raw
// bytes. Raw, so that a broadcast is serialised once and the same bytes go
// to every worker (each write takes a reference to the shared slices, no
// copy); callback, so that a write never holds a thread while the worker's
// window is full. Reading parses each message and hands it to the step
// coordinator, which decides; this class only moves bytes and keeps the
// call's life straight.
#pragma once

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/server_callback.h>

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include "hub.pb.h"
#include "hub/grpc/connection_ledger.h"
#include "hub/grpc/hello_deadlines.h"
#include "hub/transport/hub_status.h"
#include "hub/transport/transport.h"

namespace mt {

class StepCoordinator;

// Messages for gRPC streams: serialised once into a byte buffer that every
// stream sending it shares.
class GrpcEncoder final : public MessageEncoder {
 public:
  Encoded Encode(const proto::HubMessage& message) override;
};

class TrainStream final : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>,
                          public WorkerLink,
                          public HelloWaiter {
 public:
  // CPU time spent starting writes off the step loop's thread (the next
  // chunk after one is done) is added to *write_cpu_ns: part of the hub's
  // cost of broadcasting. `hello_deadlines` (may be null) closes the stream
  // if it does not say Hello in time. `ledger` (may be null) learns that
  // the stream's connection holds a worker once its Hello is accepted.
  TrainStream(StepCoordinator& coordinator, std::string peer, std::atomic<int64_t>* write_cpu_ns,
              HelloDeadlines* hello_deadlines, ConnectionLedger* ledger = nullptr);

  // Takes only messages made by GrpcEncoder.
  bool Send(Encoded message) override;

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone() override;
  void CloseForNoHello() override;

 private:
  // Reading is over (the worker closed its side, the call broke, or the hub
  // refused a message): detach from the hub, then finish once the queued
  // writes are out.
  void EndReading(grpc::Status status);
  // Hands the Hello to the hub; sets worker_id_ when accepted.
  grpc::Status AcceptHello();
  bool ClosedForNoHello();
  void StartNextWrite(bool count_cpu);

  StepCoordinator& coordinator_;
  const std::string peer_;
  ConnectionLedger* const ledger_;
  std::atomic<int64_t>* write_cpu_ns_;
  int worker_id_ = -1;  // set by the first message (Hello) once the hub accepts it
  std::shared_ptr<HelloDeadlines::Entry> hello_deadline_;  // null once Hello is in, or none
  grpc::ByteBuffer incoming_;
  proto::WorkerMessage message_;

  std::mutex mu_;
  std::deque<Encoded> queue_;
  Encoded in_flight_;  // kept alive until its write is done
  bool writing_ = false;
  bool broken_ = false;
  bool reading_done_ = false;
  bool finished_ = false;
  bool closed_for_no_hello_ = false;  // finished by CloseForNoHello
  grpc::Status final_status_;
};

// The coordinator's status as gRPC's.
grpc::Status ToGrpc(const HubStatus& status);

}  // namespace mt
