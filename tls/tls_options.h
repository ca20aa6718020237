// What the hub and the worker are told about TLS, as plain settings (the
// command lines and the C API fill them; tls/*_credentials.h act on them).
#pragma once

#include <string>

namespace mt::tls {

struct ServerOptions {
  bool insecure = false;  // plaintext: only with an explicit --insecure
  // Where the hub keeps the certificate it made itself; "": DefaultStateDir().
  std::string state_dir;
  // The hub's own certificate (chain) and key instead of the one it makes.
  std::string cert_path;
  std::string key_path;
  // Mutual TLS: workers must present a certificate signed by this CA.
  std::string client_ca_path;
};

struct ClientOptions {
  bool insecure = false;  // plaintext: only with an explicit --insecure
  // Verify the hub's chain and name against this CA bundle.
  std::string ca_path;
  // Or accept exactly the certificate with this SHA-256 fingerprint.
  std::string hub_fingerprint;
  // Otherwise trust on first use: the fingerprint seen first for a hub's
  // address is remembered here and any other refused; "": DefaultStateDir()
  // + "/known_hubs".
  std::string known_hubs_path;
  // Mutual TLS: this worker's certificate and key.
  std::string cert_path;
  std::string key_path;
};

// $MT_STATE_DIR, else $HOME/.mt. Throws std::runtime_error when neither is
// set (a service without a home must be given --state-dir).
std::string DefaultStateDir();

}  // namespace mt::tls
