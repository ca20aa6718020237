// One worker's Train stream on the hub, as a gRPC callback reactor over raw
// bytes. Raw, so that a broadcast is serialised once and the same bytes go
// to every worker (each write takes a reference to the shared slices, no
// copy); callback, so that a write never holds a thread while the worker's
// window is full. Reading parses each message and hands it to the Hub, which
// decides; this class only moves bytes and keeps the call's life straight.
#pragma once

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/server_callback.h>

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include "hub.pb.h"

namespace mt {

class Hub;

// A message serialised once, shared by every stream that sends it.
using SharedMessage = std::shared_ptr<const grpc::ByteBuffer>;
SharedMessage Serialize(const proto::HubMessage& message);

class TrainStream final : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  // CPU time spent starting writes off the step loop's thread (the next
  // chunk after one is done) is added to *write_cpu_ns: part of the hub's
  // cost of broadcasting.
  TrainStream(Hub& hub, std::string peer, std::atomic<int64_t>* write_cpu_ns);

  // Queues a message behind those not yet written. Returns false once the
  // stream is broken or closing. Thread-safe; never blocks on the network.
  bool Send(SharedMessage message);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone() override;

 private:
  // Reading is over (the worker closed its side, the call broke, or the hub
  // refused a message): detach from the hub, then finish once the queued
  // writes are out.
  void EndReading(grpc::Status status);
  void StartNextWrite(bool count_cpu);

  Hub& hub_;
  const std::string peer_;
  std::atomic<int64_t>* write_cpu_ns_;
  int worker_id_ = -1;  // set by the first message (Hello) once the hub accepts it
  grpc::ByteBuffer incoming_;
  proto::WorkerMessage message_;

  std::mutex mu_;
  std::deque<SharedMessage> queue_;
  SharedMessage in_flight_;  // kept alive until its write is done
  bool writing_ = false;
  bool broken_ = false;
  bool reading_done_ = false;
  bool finished_ = false;
  grpc::Status final_status_;
};

}  // namespace mt
