// The outcome of a call into the hub's step logic, in the hub's own terms:
// the transport adapter (hub/grpc/) maps it to its wire status, so nothing
// below the adapter knows gRPC.
#pragma once

#include <string>
#include <utility>

namespace mt {

struct HubStatus {
  enum class Code {
    kOk,
    kInvalidArgument,     // a malformed or unexpected message
    kNotFound,            // an unknown worker id
    kUnauthenticated,     // wrong or missing token
    kFailedPrecondition,  // wrong protocol version, or a call out of order
    kResourceExhausted,   // the worker's memory budget holds no batch; the run is full
    kUnavailable,         // busy for now (too many pending joins): retry with backoff
    kOutOfRange,          // the run has ended: stop, do not retry
    kPermissionDenied,    // this identity was dropped for hostile contributions: final
    kInternal,
  };

  Code code = Code::kOk;
  std::string message;

  bool ok() const { return code == Code::kOk; }
  static HubStatus Ok() { return {}; }
  static HubStatus Error(Code code, std::string message) { return {code, std::move(message)}; }
};

}  // namespace mt
