#include "hub/hub_service.h"

#include <spdlog/spdlog.h>

#include <exception>

#include "hub/hub.h"

namespace mt {
namespace {

template <class Fn>
grpc::Status Guarded(const char* what, Fn&& fn) {
  try {
    return fn();
  } catch (const std::exception& e) {
    spdlog::error("{}: {}", what, e.what());
    return grpc::Status(grpc::StatusCode::INTERNAL, std::string(what) + ": " + e.what());
  }
}

}  // namespace

grpc::Status HubService::Join(grpc::ServerContext* context, const proto::JoinRequest* request,
                              proto::JoinReply* reply) {
  return Guarded("Join", [&] { return hub_.Join(*request, reply, context->peer()); });
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* HubService::Train(grpc::CallbackServerContext* context) {
  return hub_.NewTrainStream(context->peer());
}

grpc::Status HubService::Leave(grpc::ServerContext*, const proto::LeaveRequest* request, proto::LeaveReply*) {
  return Guarded("Leave", [&] { return hub_.Leave(*request); });
}

}  // namespace mt
