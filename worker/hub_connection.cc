#include "worker/hub_connection.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <thread>

#include <netdb.h>
#include <sys/socket.h>

#include "proto/wire.h"
#include "tls/hub_probe.h"

namespace mt {

std::string HubTarget(const std::string& hub) {
  if (hub.empty()) throw std::invalid_argument("--hub: empty address");
  // A bare IPv6 address has several colons and needs brackets to take a port.
  const bool has_port = hub.find(':') != std::string::npos && hub.find(':') == hub.rfind(':');
  if (has_port || (hub.front() == '[' && hub.find("]:") != std::string::npos)) return hub;
  return hub + ":50051";
}

grpc::ChannelArguments HubChannelArguments() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(wire::kMaxMessageBytes);
  args.SetMaxSendMessageSize(wire::kMaxMessageBytes);
  args.SetInt(GRPC_ARG_HTTP2_MAX_FRAME_SIZE, wire::kHttp2FrameBytes);
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, wire::kHttp2WindowBytes);
  return args;
}

HubConnection::HubConnection(const std::string& hub, const tls::ClientOptions& tls,
                             EventFile* events)
    : target_(HubTarget(hub)),
      tls_(tls),
      events_(events),
      security_(tls::MakeChannelSecurity(tls, target_)) {
  grpc::ChannelArguments args = HubChannelArguments();
  // Reconnect attempts stay frequent, so a hub that comes up is found soon.
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 200);
  channel_ = grpc::CreateCustomChannel(target_, security_.credentials, args);
  spdlog::info("hub at {}: {}", target_, security_.description);
  stub_ = proto::Hub::NewStub(channel_);
}

void CheckHubAddress(const std::string& hub) {
  const std::string target = HubTarget(hub);
  const size_t colon = target.rfind(':');
  std::string host = target.substr(0, colon);
  const std::string port = target.substr(colon + 1);
  char* end = nullptr;
  const long p = std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p < 1 || p > 65535)
    throw std::invalid_argument("hub address '" + hub + "': port '" + port +
                                "' is not a number in 1..65535");
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (host.empty()) throw std::invalid_argument("hub address '" + hub + "' has no host");
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &found);
  if (rc != 0)
    throw std::invalid_argument("hub address '" + hub + "': cannot resolve '" + host +
                                "': " + gai_strerror(rc));
  freeaddrinfo(found);
}

void HubConnection::Diagnose() {
  const tls::ProbeResult found = tls::ProbeHub(target_, tls_, std::chrono::seconds(2));
  const std::string cause = tls::CauseName(found.cause);
  if (cause.empty() || !causes_said_.insert(cause).second) return;
  // Said once per cause: the same cause again changes nothing.
  const std::string why = tls::Explain(found);
  last_diagnosis_ = why;
  if (events_)
    events_->Write("hub_connect_failed",
                   {{"hub", target_}, {"cause", cause}, {"detail", found.detail}});
  if (found.fatal) throw std::runtime_error("cannot join the hub at " + target_ + ": " + why);
  spdlog::warn("hub at {}: {}", target_, why);
}

proto::JoinReply HubConnection::Join(const proto::JoinRequest& request, double timeout_s,
                                     const std::function<bool()>& should_stop) {
  using Clock = std::chrono::steady_clock;
  const auto give_up = Clock::now() + std::chrono::duration<double>(timeout_s);
  auto next_log = Clock::now() + std::chrono::seconds(10);
  // Probes are a connection of their own each: one every few seconds.
  constexpr auto kProbeInterval = std::chrono::seconds(5);
  auto next_probe = Clock::now();
  if (!channel_->WaitForConnected(std::chrono::system_clock::now() +
                                  std::chrono::milliseconds(500))) {
    spdlog::info("hub at {} is not up yet; waiting for it (up to {:.0f} s)", target_, timeout_s);
    if (events_) events_->Write("waiting_for_hub", {{"hub", target_}, {"timeout_s", timeout_s}});
    Diagnose();
    next_probe = Clock::now() + kProbeInterval;
  }
  std::chrono::milliseconds busy_backoff{200};
  for (;;) {
    const auto attempt_start = Clock::now();
    grpc::ClientContext context;
    // Waiting for the channel to become ready, rather than failing at once
    // and sleeping, lets the channel's own reconnect backoff (200 ms to 2 s)
    // find a hub that has just come up.
    context.set_wait_for_ready(true);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
    proto::JoinReply reply;
    const grpc::Status status = stub_->Join(&context, request, &reply);
    if (status.ok()) return reply;
    // A certificate refused is not a hub still starting: retrying would only
    // hide the reason.
    if (security_.check) {
      const tls::HubCertificateCheck::Refusal refused = security_.check->refusal();
      if (!refused.why.empty()) {
        if (events_)
          events_->Write(
              "hub_certificate_refused",
              {{"hub", target_}, {"presented", refused.presented}, {"expected", refused.expected}});
        throw std::runtime_error(refused.why);
      }
    }
    if (status.error_code() == grpc::StatusCode::OUT_OF_RANGE)
      throw RunEnded("hub " + target_ + ": " + status.error_message());
    const bool retry = status.error_code() == grpc::StatusCode::UNAVAILABLE ||
                       status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
    // Final refusals (wrong token, PERMISSION_DENIED for a client certificate
    // the hub dropped as hostile, ...): joining again would only repeat them.
    if (!retry) {
      if (events_)
        events_->Write("join_refused", {{"hub", target_},
                                        {"grpc_code", static_cast<int>(status.error_code())},
                                        {"detail", status.error_message()}});
      throw std::runtime_error("hub " + target_ +
                               " refused to let this worker join: " + status.error_message());
    }
    if (Clock::now() >= next_probe) {
      Diagnose();
      next_probe = Clock::now() + kProbeInterval;
    }
    if (Clock::now() >= give_up)
      throw std::runtime_error(
          "hub " + target_ + " not reachable after " + std::to_string(static_cast<int>(timeout_s)) +
          " s (" +
          (last_diagnosis_.empty() ? "last error: " + status.error_message() : last_diagnosis_) +
          ")");
    if (should_stop()) throw JoinStopped("stopped before the hub at " + target_ + " was reachable");
    if (Clock::now() >= next_log) {
      spdlog::info("hub at {} is not up yet; retrying (last error: {})", target_,
                   status.error_message());
      next_log = Clock::now() + std::chrono::seconds(10);
    }
    // A hub that answered at once (busy with other joins) is asked again
    // after a pause, not in a tight loop; one that did not answer has
    // already taken the call's deadline.
    if (Clock::now() - attempt_start < std::chrono::milliseconds(200)) {
      spdlog::debug("hub at {} is busy: {}", target_, status.error_message());
      for (const auto until = Clock::now() + busy_backoff; Clock::now() < until && !should_stop();)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      busy_backoff = std::min(2 * busy_backoff, std::chrono::milliseconds(2000));
    }
  }
}

GrpcHubLink::GrpcHubLink(proto::Hub::Stub& stub) : stream_(stub.Train(&context_)) {}

std::string GrpcHubLink::Finish() {
  const grpc::Status status = stream_->Finish();
  if (status.ok()) return "";
  return status.error_message().empty() ? "gRPC status " + std::to_string(status.error_code())
                                        : status.error_message();
}

void HubConnection::Leave(int worker_id, const std::string& token, const std::string& secret,
                          const std::string& reason) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  proto::LeaveRequest request;
  request.set_worker_id(worker_id);
  request.set_token(token);
  request.set_session_secret(secret);
  request.set_reason(reason);
  proto::LeaveReply reply;
  stub_->Leave(&context, request, &reply);
}

}  // namespace mt
