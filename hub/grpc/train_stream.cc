#include "hub/grpc/train_stream.h"

#include <spdlog/spdlog.h>

#include <ctime>
#include <exception>

#include "hub.grpc.pb.h"

#include "core/util/rate_limited_log.h"
#include "hub/coordinator/step_coordinator.h"
#include "hub/membership/network_strings.h"
#include "hub/transport/hub_status.h"

namespace mt {
namespace {

int64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

struct GrpcEncoded final : EncodedMessage {
  grpc::ByteBuffer bytes;
};

}  // namespace

Encoded GrpcEncoder::Encode(const proto::HubMessage& message) {
  auto encoded = std::make_shared<GrpcEncoded>();
  bool own = false;
  const grpc::Status s =
      grpc::SerializationTraits<proto::HubMessage>::Serialize(message, &encoded->bytes, &own);
  if (!s.ok())
    throw std::runtime_error("cannot serialise a message to the workers: " + s.error_message());
  return encoded;
}

grpc::Status ToGrpc(const HubStatus& status) {
  using Code = HubStatus::Code;
  grpc::StatusCode code = grpc::StatusCode::INTERNAL;
  switch (status.code) {
    case Code::kOk: return grpc::Status::OK;
    case Code::kInvalidArgument: code = grpc::StatusCode::INVALID_ARGUMENT; break;
    case Code::kNotFound: code = grpc::StatusCode::NOT_FOUND; break;
    case Code::kUnauthenticated: code = grpc::StatusCode::UNAUTHENTICATED; break;
    case Code::kFailedPrecondition: code = grpc::StatusCode::FAILED_PRECONDITION; break;
    case Code::kResourceExhausted: code = grpc::StatusCode::RESOURCE_EXHAUSTED; break;
    case Code::kOutOfRange: code = grpc::StatusCode::OUT_OF_RANGE; break;
    case Code::kPermissionDenied: code = grpc::StatusCode::PERMISSION_DENIED; break;
    case Code::kUnavailable: code = grpc::StatusCode::UNAVAILABLE; break;
    case Code::kInternal: code = grpc::StatusCode::INTERNAL; break;
  }
  return grpc::Status(code, status.message);
}

namespace {

HubStatus FromGrpc(const grpc::Status& status) {
  if (status.ok()) return HubStatus::Ok();
  return HubStatus::Error(HubStatus::Code::kInvalidArgument, status.error_message());
}

}  // namespace

TrainStream::TrainStream(StepCoordinator& coordinator, std::string peer,
                         std::atomic<int64_t>* write_cpu_ns, HelloDeadlines* hello_deadlines,
                         ConnectionLedger* ledger)
    : coordinator_(coordinator),
      peer_(std::move(peer)),
      ledger_(ledger),
      write_cpu_ns_(write_cpu_ns) {
  if (hello_deadlines) hello_deadline_ = hello_deadlines->Add(this);
  StartRead(&incoming_);
}

void TrainStream::CloseForNoHello() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_ || worker_id_ >= 0) return;
    finished_ = true;
    closed_for_no_hello_ = true;
  }
  static RateLimitedLog log;
  int64_t left_out = 0;
  if (log.ShouldLog(&left_out))
    spdlog::warn(
        "closed a Train stream from {}: no Hello in time ({} more since the last such line)", peer_,
        left_out);
  // Nothing may touch this object after Finish: it may end at once.
  Finish(grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                      "the first message on a Train stream must be Hello, and it did not come in "
                      "time"));
}

bool TrainStream::Send(Encoded message) {
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
  // Only GrpcEncoder makes the messages queued here.
  StartWrite(&static_cast<const GrpcEncoded&>(*in_flight_).bytes);
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
  if (more)
    StartNextWrite(true);
  else if (finish)
    Finish(final_status_);
}

void TrainStream::OnReadDone(bool ok) {
  if (!ok) return EndReading(grpc::Status::OK);  // the worker closed its side, or the call broke
  grpc::Status status;
  try {
    status = grpc::SerializationTraits<proto::WorkerMessage>::Deserialize(&incoming_, &message_);
    if (!status.ok())
      status = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                            "unreadable message: " + status.error_message());
    else if (worker_id_ < 0) {
      if (!message_.has_hello())
        status = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                              "the first message on a Train stream must be Hello");
      else if (ClosedForNoHello())
        status = grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "Hello came too late");
      else
        status = AcceptHello();
      if (hello_deadline_ && worker_id_ >= 0) {
        hello_deadline_->Withdraw();
        hello_deadline_.reset();
      }
    } else
      status = message_.has_gradient()
                   ? ToGrpc(coordinator_.Gradient(worker_id_, message_.gradient()))
               : message_.has_secagg_bundle() || message_.has_secagg_reveal()
                   ? ToGrpc(coordinator_.SecureMessage(worker_id_, message_))
                   : grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "expected a gradient chunk");
  } catch (const std::exception& e) {
    spdlog::error("Train stream from {}: {}", peer_, e.what());
    status = grpc::Status(grpc::StatusCode::INTERNAL, e.what());
  }
  if (!status.ok()) return EndReading(status);
  // Closed for lateness while its Hello was being accepted: no more reads;
  // the hub lets go of the worker as of any closed stream.
  if (ClosedForNoHello())
    return EndReading(grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "Hello came too late"));
  StartRead(&incoming_);
}

grpc::Status TrainStream::AcceptHello() {
  int id = -1;
  BoundStrings(message_.mutable_hello());
  const grpc::Status status = ToGrpc(coordinator_.Hello(message_.hello(), this, &id));
  // A worker holds this connection now, even if its Join came on another.
  if (status.ok()) MarkGrpcPeer(ledger_, peer_, ConnectionLedger::Stage::kWorker);
  // Under the lock: CloseForNoHello reads it from the sweeper's thread.
  std::lock_guard<std::mutex> lock(mu_);
  worker_id_ = id;
  return status;
}

bool TrainStream::ClosedForNoHello() {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_for_no_hello_;
}

void TrainStream::EndReading(grpc::Status status) {
  if (worker_id_ >= 0) {
    try {
      coordinator_.StreamClosed(worker_id_, FromGrpc(status));
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

void TrainStream::OnDone() {
  if (hello_deadline_) hello_deadline_->Withdraw();
  delete this;
}

}  // namespace mt
