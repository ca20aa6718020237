// Messages to one worker, written by a thread of its own: the step loop
// hands the same prepared message to every worker's outbox at once instead
// of waiting on each stream's flow control in turn, so a broadcast costs the
// hub a queue push per worker and the writes proceed in parallel.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "hub.grpc.pb.h"

namespace mt {

using HubStream = grpc::ServerReaderWriter<proto::HubMessage, proto::WorkerMessage>;
using SharedMessage = std::shared_ptr<const proto::HubMessage>;

class Outbox {
 public:
  // CPU time spent writing is added to *write_cpu_ns (the hub's cost of
  // broadcasting, reported as part of its share of the step).
  Outbox(HubStream* stream, std::atomic<int64_t>* write_cpu_ns);
  // Writes what is queued, then stops; never throws.
  ~Outbox();
  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;

  // Returns false once a write has failed (the stream is broken).
  bool Send(SharedMessage message);
  // Drops what is not yet written and stops; for a stream being torn down.
  void Abandon();

 private:
  void Loop();

  HubStream* stream_;
  std::atomic<int64_t>* write_cpu_ns_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<SharedMessage> queue_;
  bool closing_ = false;
  bool broken_ = false;
  std::thread thread_;
};

}  // namespace mt
