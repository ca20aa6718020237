// What the step logic needs of the network, and nothing more: encode a
// message once and queue it to any number of workers. The gRPC adapter
// (hub/grpc/) encodes into one byte buffer that every stream shares; tests
// use an in-process transport that hands messages to worker threads.
#pragma once

#include <memory>

#include "hub.pb.h"

namespace mt {

// A message in the transport's own encoding, shared by every worker it goes
// to. Only the transport that made it reads it.
class EncodedMessage {
 public:
  virtual ~EncodedMessage() = default;
};
using Encoded = std::shared_ptr<const EncodedMessage>;

class MessageEncoder {
 public:
  virtual ~MessageEncoder() = default;
  // Throws when the message cannot be encoded.
  virtual Encoded Encode(const proto::HubMessage& message) = 0;
};

// One worker's open stream.
class WorkerLink {
 public:
  virtual ~WorkerLink() = default;
  // Queues a message behind those not yet sent. Returns false once the link
  // is broken or closing; the transport then reports the stream closed.
  // Thread-safe; never blocks on the network.
  virtual bool Send(Encoded message) = 0;
};

}  // namespace mt
