// The worker's credentials for its channel to the hub: the hub's chain
// checked against a CA, or its certificate against a pinned or remembered
// fingerprint (trust on first use), or plaintext when asked.
#pragma once

#include <grpcpp/security/credentials.h>

#include <memory>
#include <mutex>
#include <string>

#include "tls/tls_options.h"

namespace mt::tls {

// Why the hub's certificate was last refused, so the worker can stop with
// that reason instead of retrying a handshake gRPC only calls failed.
class HubCertificateCheck {
 public:
  struct Refusal {
    std::string why;        // "" while nothing was refused
    std::string presented;  // the fingerprint the hub showed
    std::string expected;   // the pinned or remembered one
  };
  Refusal refusal() const {
    std::lock_guard<std::mutex> lock(mu_);
    return refusal_;
  }
  void Refuse(Refusal r) {
    std::lock_guard<std::mutex> lock(mu_);
    refusal_ = std::move(r);
  }

 private:
  mutable std::mutex mu_;
  Refusal refusal_;
};

struct ChannelSecurity {
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  // Set when a fingerprint decides (pinned or remembered); null otherwise.
  std::shared_ptr<HubCertificateCheck> check;
  std::string description;  // for the worker's log
};

// `address`: the hub as dialled ("host:port"), the key of the known hubs
// file. Throws std::invalid_argument for contradictory options or unusable
// files.
ChannelSecurity MakeChannelSecurity(const ClientOptions& options, const std::string& address);

}  // namespace mt::tls
