#include "tls/server_credentials.h"

#include <grpcpp/security/server_credentials.h>

#include <stdexcept>

#include "core/util/atomic_file.h"
#include "tls/certificate.h"
#include "tls/hub_identity.h"

namespace mt::tls {

std::string ServerSecurity::Describe() const {
  if (fingerprint.empty())
    return "plaintext (--insecure): anyone on the path can read and alter it";
  std::string text = "TLS, certificate " + cert_path + (created ? " (made now)" : "") +
                     ", fingerprint " + fingerprint +
                     " (workers can pin it with --hub-fingerprint; unpinned, they remember the "
                     "first one they see)";
  if (mutual) text += "; workers must present a certificate from --tls-client-ca";
  return text;
}

ServerSecurity MakeServerSecurity(const ServerOptions& options) {
  ServerSecurity security;
  if (options.insecure) {
    if (!options.cert_path.empty() || !options.key_path.empty() || !options.client_ca_path.empty())
      throw std::invalid_argument(
          "--insecure turns TLS off; it cannot go with --tls-cert, "
          "--tls-key or --tls-client-ca");
    security.credentials = grpc::InsecureServerCredentials();
    return security;
  }
  const HubIdentity id = LoadOrCreateHubIdentity(options);
  grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back({id.key_pem, id.cert_pem});
  if (!options.client_ca_path.empty()) {
    std::string ca;
    try {
      ca = ReadFile(options.client_ca_path);
    } catch (const std::runtime_error& e) {
      throw std::invalid_argument(std::string("--tls-client-ca: ") + e.what());
    }
    CheckCertificates(ca, "--tls-client-ca " + options.client_ca_path);
    ssl.pem_root_certs = ca;
    ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
    security.mutual = true;
  }
  security.credentials = grpc::SslServerCredentials(ssl);
  security.fingerprint = id.fingerprint;
  security.cert_path = id.cert_path;
  security.created = id.created;
  return security;
}

}  // namespace mt::tls
