// The hub's TLS identity: the certificate and key it was given, or the
// self-signed pair it made once and keeps in its state directory, so that
// workers that remembered its fingerprint still recognise it after a
// restart.
#pragma once

#include <string>

#include "tls/tls_options.h"

namespace mt::tls {

struct HubIdentity {
  std::string cert_pem;
  std::string key_pem;
  std::string cert_path;    // where the certificate lives (for --tls-ca on workers)
  std::string fingerprint;  // of the leaf certificate, Fingerprint()
  bool created = false;     // made just now
};

// From options.cert_path/key_path when given (both or neither), else
// STATE_DIR/hub-cert.pem and hub-key.pem, made on first use (the key 0600;
// hubs starting together make one pair between them). Throws
// std::invalid_argument for unusable given files and std::runtime_error when
// the state directory cannot be used.
HubIdentity LoadOrCreateHubIdentity(const ServerOptions& options);

}  // namespace mt::tls
