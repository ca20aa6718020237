// The worker's side of the wire: a channel to the hub, Join with retry and
// backoff while the hub is not up yet, and the Train stream as a HubLink.
#pragma once

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>

#include "core/util/event_file.h"
#include "hub.grpc.pb.h"
#include "tls/channel_credentials.h"
#include "tls/tls_options.h"
#include "worker/hub_link.h"

namespace mt {

// The channel settings every connection to a hub uses (message sizes,
// HTTP/2 frame and window: proto/wire.h), for the worker and its simulators.
grpc::ChannelArguments HubChannelArguments();

// "host" -> "host:50051"; "host:port" unchanged.
std::string HubTarget(const std::string& hub);

// The hub answered that its run is over: nothing to rejoin.
struct RunEnded : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The worker was asked to stop while it was still trying to join.
struct JoinStopped : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Checks that `hub` is HOST[:PORT] with a port in 1..65535 and a host that
// resolves; throws std::invalid_argument saying what is wrong.
void CheckHubAddress(const std::string& hub);

// One Train call: the gRPC adapter under HubSession, and what the session's
// owner needs of the call besides (cancelling it, its final status).
class GrpcHubLink final : public HubLink {
 public:
  explicit GrpcHubLink(proto::Hub::Stub& stub);

  bool Send(const proto::WorkerMessage& message) override { return stream_->Write(message); }
  bool Read(proto::HubMessage* message) override { return stream_->Read(message); }
  void CloseSending() override { stream_->WritesDone(); }

  // Ends the call at once, from any thread: a Read blocked on it returns.
  void Cancel() { context_.TryCancel(); }
  // Once nothing more is read: "" when the call ended cleanly, else why not.
  std::string Finish();

 private:
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<proto::WorkerMessage, proto::HubMessage>> stream_;
};

class HubConnection {
 public:
  // `events` (may be null) gets "waiting_for_hub" when a Join finds no hub.
  // Throws std::invalid_argument for unusable TLS options.
  HubConnection(const std::string& hub, const tls::ClientOptions& tls, EventFile* events = nullptr);

  // Joins, retrying while the hub is unreachable, for up to timeout_s.
  // Throws RunEnded when the run is over, JoinStopped once should_stop()
  // says so, std::runtime_error with the hub's reason when it refuses, with
  // the reason its certificate was refused, or with what a probe of the
  // hub's address found that retrying cannot mend (tls/hub_probe.h: a
  // certificate not trusted, a client certificate missing, plaintext
  // against TLS). Each cause the probe finds is logged and written as a
  // "hub_connect_failed" event once.
  proto::JoinReply Join(const proto::JoinRequest& request, double timeout_s,
                        const std::function<bool()>& should_stop);
  std::unique_ptr<GrpcHubLink> OpenTrain() { return std::make_unique<GrpcHubLink>(*stub_); }
  // Best effort: tells the hub this worker leaves on purpose.
  // `secret`: the session secret from this worker's JoinReply.
  void Leave(int worker_id, const std::string& token, const std::string& secret,
             const std::string& reason);

  const std::string& target() const { return target_; }

 private:
  // Probes the hub's address; says what it found once per cause, and
  // throws when retrying cannot help.
  void Diagnose();

  std::string target_;
  tls::ClientOptions tls_;
  std::set<std::string> causes_said_;
  std::string last_diagnosis_;  // the latest cause found, for the final error
  EventFile* events_;
  tls::ChannelSecurity security_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<proto::Hub::Stub> stub_;
};

}  // namespace mt
