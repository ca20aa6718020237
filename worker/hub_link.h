// The worker's end of one Train session with the hub, as HubSession sees
// it: messages out, messages in. The gRPC stream is one implementation
// (GrpcHubLink, worker/hub_connection.h); tests play a hub in memory through another,
// and a test-only build decorates it to play a hostile worker.
#pragma once

#include <functional>
#include <memory>

#include "hub.pb.h"

namespace mt {

class HubLink {
 public:
  virtual ~HubLink() = default;
  // False once the link has broken (the next Read says so too).
  virtual bool Send(const proto::WorkerMessage& message) = 0;
  // Blocks for the hub's next message; false when the hub has gone (it
  // closed the session or the link broke).
  virtual bool Read(proto::HubMessage* message) = 0;
  // This worker sends nothing more; the hub's messages may still come.
  virtual void CloseSending() = 0;
};

// Wraps each session's link in another, given the session's JoinReply
// (null: the link is used as it is). Only test builds give one
// (tests/faulty_worker/: a worker that corrupts what it sends).
using HubLinkDecorator =
    std::function<std::unique_ptr<HubLink>(HubLink& link, const proto::JoinReply& join)>;

}  // namespace mt
