#pragma once

#include "hub.grpc.pb.h"

namespace mt {

class Hub;

// The gRPC face of the hub: every call is forwarded, every failure leaves as
// a status with a message, never as an exception.
class HubService final : public proto::Hub::WithRawCallbackMethod_Train<proto::Hub::Service> {
 public:
  explicit HubService(Hub& hub) : hub_(hub) {}

  grpc::Status Join(grpc::ServerContext* context, const proto::JoinRequest* request,
                    proto::JoinReply* reply) override;
  // Raw bytes, so that one serialised broadcast serves every worker.
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* Train(grpc::CallbackServerContext* context) override;
  grpc::Status Leave(grpc::ServerContext* context, const proto::LeaveRequest* request,
                     proto::LeaveReply* reply) override;

 private:
  Hub& hub_;
};

}  // namespace mt
