// Why a worker cannot reach its hub, found out directly: gRPC reports a
// refused connection, a certificate refused, a hub that wants a client
// certificate and a hub speaking the other of plaintext and TLS all as
// "Deadline Exceeded" or "failed to connect". When a connection fails, the
// worker opens one of its own to the hub's address, tries a TLS handshake
// with its own trust settings (or HTTP/2 in plaintext) and classifies what
// happens.
#pragma once

#include <chrono>
#include <string>

#include "tls/tls_options.h"

namespace mt::tls {

struct ProbeResult {
  enum class Cause {
    kNone,                       // the hub answers as this worker expects
    kUnreachable,                // no answer in time (down, filtered, wrong host)
    kConnectionRefused,          // nothing listens there (a hub may be starting)
    kTlsHandshakeFailed,         // `detail` says why
    kClientCertificateRequired,  // mutual TLS, and this worker has no certificate
    kHubSpeaksPlaintext,         // the hub runs with --insecure, this worker not
    kHubSpeaksTls,               // this worker runs with --insecure, the hub not
  };
  Cause cause = Cause::kNone;
  std::string detail;  // OpenSSL's reason, or the system's
  // Whether retrying cannot help: a certificate refused, a client
  // certificate missing, plaintext against TLS.
  bool fatal = false;
};

// "connection_refused", "tls_handshake_failed", ...: the cause as events
// name it ("" for kNone).
const char* CauseName(ProbeResult::Cause cause);

// What is wrong and what to do, for the worker's log.
std::string Explain(const ProbeResult& result);

// Probes `target` ("host:port", "[v6]:port") as a worker with `options`
// would talk to it, each step within `timeout`. Pinned and trusted-on-
// first-use fingerprints are not checked here (the channel's own verifier
// does, and says so); a CA bundle is, with the host name as gRPC checks it.
ProbeResult ProbeHub(const std::string& target, const ClientOptions& options,
                     std::chrono::milliseconds timeout);

}  // namespace mt::tls
