#include "hub/train_stream.h"

#include <spdlog/spdlog.h>

#include <ctime>
#include <exception>

#include "hub/hub.h"

namespace mt {
namespace {

int64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

SharedMessage Serialize(const proto::HubMessage& message) {
  auto bytes = std::make_shared<grpc::ByteBuffer>();
  bool own = false;
  const grpc::Status s = grpc::SerializationTraits<proto::HubMessage>::Serialize(message, bytes.get(), &own);
  if (!s.ok()) throw std::runtime_error("cannot serialise a message to the workers: " + s.error_message());
  return bytes;
}

TrainStream::TrainStream(Hub& hub, std::string peer, std::atomic<int64_t>* write_cpu_ns)
    : hub_(hub), peer_(std::move(peer)), write_cpu_ns_(write_cpu_ns) {
  StartRead(&incoming_);
}

bool TrainStream::Send(SharedMessage message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (broken_ || finished_) return false;
    queue_.push_back(std::move(message));
    if (writing_) return true;
    writing_ = true;
  }
  StartNextWrite(false);
  return true;
}

void TrainStream::StartNextWrite(bool count_cpu) {
  // Only one write is in flight at a time, so only its starter touches
  // in_flight_ until OnWriteDone; the lock guards the queue. StartWrite is
  // called unlocked because its completion may run on this very thread.
  {
    std::lock_guard<std::mutex> lock(mu_);
    in_flight_ = std::move(queue_.front());
    queue_.pop_front();
  }
  const int64_t t0 = count_cpu ? ThreadCpuNs() : 0;
  StartWrite(in_flight_.get());
  if (count_cpu) write_cpu_ns_->fetch_add(ThreadCpuNs() - t0, std::memory_order_relaxed);
}

void TrainStream::OnWriteDone(bool ok) {
  bool more = false, finish = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    in_flight_.reset();
    if (!ok) {
      broken_ = true;  // the call is gone; the read side notices and ends too
      queue_.clear();
    }
    more = !queue_.empty();
    if (!more) {
      writing_ = false;
      finish = reading_done_ && !finished_;
      finished_ = finished_ || finish;
    }
  }
  if (more) StartNextWrite(true);
  else if (finish) Finish(final_status_);
}

void TrainStream::OnReadDone(bool ok) {
  if (!ok) return EndReading(grpc::Status::OK);  // the worker closed its side, or the call broke
  grpc::Status status;
  try {
    status = grpc::SerializationTraits<proto::WorkerMessage>::Deserialize(&incoming_, &message_);
    if (!status.ok())
      status = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "unreadable message: " + status.error_message());
    else if (worker_id_ < 0)
      status = hub_.OpenTrainStream(message_, this, &worker_id_);
    else
      status = hub_.OnTrainMessage(worker_id_, message_);
  } catch (const std::exception& e) {
    spdlog::error("Train stream from {}: {}", peer_, e.what());
    status = grpc::Status(grpc::StatusCode::INTERNAL, e.what());
  }
  if (!status.ok()) return EndReading(status);
  StartRead(&incoming_);
}

void TrainStream::EndReading(grpc::Status status) {
  if (worker_id_ >= 0) {
    try {
      hub_.CloseTrainStream(worker_id_, status);
    } catch (const std::exception& e) {
      spdlog::error("closing the Train stream of worker {}: {}", worker_id_, e.what());
    }
  }
  bool finish = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    reading_done_ = true;
    final_status_ = std::move(status);
    finish = !writing_ && !finished_;
    finished_ = finished_ || finish;
  }
  if (finish) Finish(final_status_);
}

void TrainStream::OnDone() { delete this; }

}  // namespace mt
