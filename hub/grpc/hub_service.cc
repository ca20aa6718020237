#include "hub/grpc/hub_service.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <exception>
#include <stdexcept>

#include "hub/coordinator/step_coordinator.h"
#include "hub/membership/network_strings.h"
#include "hub/net/listen_socket.h"
#include "proto/wire.h"
#include "tls/certificate.h"

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

// What mutual TLS proved of the peer: the SHA-256 fingerprint of the client
// certificate it verified against --tls-client-ca, or "" without mutual TLS
// (the hub then asks for no certificate, and none is presented).
std::string PeerIdentity(const grpc::ServerContext& context) {
  const std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (!auth) return "";
  const std::vector<grpc::string_ref> pem = auth->FindPropertyValues("x509_pem_cert");
  if (pem.empty()) return "";
  return tls::Fingerprint(std::string(pem.front().data(), pem.front().size()));
}

// See HubServer::HubServer.
constexpr int kHandshakeTimeoutMs = 20'000;
constexpr int kIdleConnectionMs = 60'000;

}  // namespace

grpc::Status HubService::Join(grpc::ServerContext* context, const proto::JoinRequest* request,
                              proto::JoinReply* reply) {
  grpc::Status status = Guarded("Join", [&] {
    proto::JoinRequest bounded = *request;
    BoundStrings(&bounded);
    return coordinator_.Join(bounded, context->peer(), reply, PeerIdentity(*context));
  });
  // A worker now holds the connection: it leaves its address's count.
  MarkGrpcPeer(ledger_, context->peer(),
               status.ok() ? ConnectionLedger::Stage::kWorker : ConnectionLedger::Stage::kCalls);
  return status;
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* HubService::Train(
    grpc::CallbackServerContext* context) {
  MarkGrpcPeer(ledger_, context->peer(), ConnectionLedger::Stage::kCalls);
  return new TrainStream(coordinator_, context->peer(), write_cpu_ns_, hello_deadlines_, ledger_);
}

grpc::Status HubService::Leave(grpc::ServerContext* context, const proto::LeaveRequest* request,
                               proto::LeaveReply*) {
  MarkGrpcPeer(ledger_, context->peer(), ConnectionLedger::Stage::kCalls);
  return Guarded("Leave", [&] {
    proto::LeaveRequest bounded = *request;
    BoundStrings(&bounded);
    return coordinator_.Leave(bounded);
  });
}

HubServer::HubServer(StepCoordinator& coordinator, const std::string& bind, int port,
                     std::shared_ptr<grpc::ServerCredentials> credentials,
                     std::atomic<int64_t>* write_cpu_ns, std::chrono::milliseconds hello_timeout,
                     int max_workers)
    : hello_deadlines_(hello_timeout),
      ledger_(CapsFor(RaiseOpenFileLimit(), max_workers)),
      service_(coordinator, write_cpu_ns, &hello_deadlines_, &ledger_) {
  // The hub binds and accepts itself (hub/grpc/connection_gate.h); gRPC
  // gets the connections it admits.
  ListenSocket socket = OpenListenSocket(bind, port);
  gate_ = std::make_unique<ConnectionGate>(socket, ledger_);
  grpc::ServerBuilder builder;
  acceptor_ = builder.experimental().AddExternalConnectionAcceptor(
      grpc::ServerBuilder::experimental_type::ExternalConnectionType::FROM_FD,
      std::move(credentials));
  builder.SetMaxReceiveMessageSize(wire::kMaxMessageBytes);
  builder.SetMaxSendMessageSize(wire::kMaxMessageBytes);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_FRAME_SIZE, wire::kHttp2FrameBytes);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, wire::kHttp2WindowBytes);
  // A connection that never finishes its TLS handshake or never sends
  // HTTP/2's preface holds a descriptor; so does one with no call on it.
  // Workers keep a Train call open while they take part, and their channel
  // reconnects by itself for the next call.
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, kHandshakeTimeoutMs);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS, kIdleConnectionMs);
  builder.RegisterService(&service_);
  server_ = builder.BuildAndStart();
  if (!server_) throw std::runtime_error("gRPC could not start serving on " + bind);
  gate_->Start(acceptor_.get());
}

HubServer::~HubServer() {
  gate_.reset();
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
}

}  // namespace mt
