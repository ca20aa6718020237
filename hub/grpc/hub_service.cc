#include "hub/grpc/hub_service.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <exception>

#include "hub/network_strings.h"
#include "hub/step_coordinator.h"
#include "proto/wire.h"

namespace mt {
namespace {

template <class Fn>
grpc::Status Guarded(const char* what, Fn&& fn) {
  try {
    return ToGrpc(fn());
  } catch (const std::exception& e) {
    spdlog::error("{}: {}", what, e.what());
    return grpc::Status(grpc::StatusCode::INTERNAL, std::string(what) + ": " + e.what());
  }
}

}  // namespace

grpc::Status HubService::Join(grpc::ServerContext* context, const proto::JoinRequest* request,
                              proto::JoinReply* reply) {
  return Guarded("Join", [&] {
    proto::JoinRequest bounded = *request;
    BoundStrings(&bounded);
    return coordinator_.Join(bounded, context->peer(), reply);
  });
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* HubService::Train(
    grpc::CallbackServerContext* context) {
  return new TrainStream(coordinator_, context->peer(), write_cpu_ns_, hello_deadlines_);
}

grpc::Status HubService::Leave(grpc::ServerContext*, const proto::LeaveRequest* request,
                               proto::LeaveReply*) {
  return Guarded("Leave", [&] {
    proto::LeaveRequest bounded = *request;
    BoundStrings(&bounded);
    return coordinator_.Leave(bounded);
  });
}

HubServer::HubServer(StepCoordinator& coordinator, const std::string& bind, int port,
                     std::shared_ptr<grpc::ServerCredentials> credentials,
                     std::atomic<int64_t>* write_cpu_ns, std::chrono::milliseconds hello_timeout)
    : hello_deadlines_(hello_timeout), service_(coordinator, write_cpu_ns, &hello_deadlines_) {
  grpc::ServerBuilder builder;
  const std::string address = bind + ":" + std::to_string(port);
  builder.AddListeningPort(address, std::move(credentials), &port_);
  builder.SetMaxReceiveMessageSize(wire::kMaxMessageBytes);
  builder.SetMaxSendMessageSize(wire::kMaxMessageBytes);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_FRAME_SIZE, wire::kHttp2FrameBytes);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, wire::kHttp2WindowBytes);
  builder.RegisterService(&service_);
  server_ = builder.BuildAndStart();
  if (!server_ || port_ == 0)
    throw std::runtime_error("cannot listen on " + address + " (port in use?)");
}

HubServer::~HubServer() {
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
}

}  // namespace mt
