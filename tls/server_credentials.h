// The hub's listening credentials: TLS with its own or a made certificate
// (optionally requiring workers' certificates), or plaintext when asked.
#pragma once

#include <grpcpp/security/server_credentials.h>

#include <memory>
#include <string>

#include "tls/tls_options.h"

namespace mt::tls {

struct ServerSecurity {
  std::shared_ptr<grpc::ServerCredentials> credentials;
  std::string fingerprint;  // of the hub's certificate; "" in plaintext
  std::string cert_path;    // the certificate workers may hold as --tls-ca
  bool created = false;     // the certificate was made just now
  bool mutual = false;      // workers must present a certificate
  // One line for the hub's log: how it listens, and how a worker can pin it.
  std::string Describe() const;
};

// Throws std::invalid_argument for unusable files, std::runtime_error when
// the state directory cannot be used.
ServerSecurity MakeServerSecurity(const ServerOptions& options);

}  // namespace mt::tls
