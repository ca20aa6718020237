#include "tls/channel_credentials.h"

#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <spdlog/spdlog.h>

#include <stdexcept>

#include "core/util/atomic_file.h"
#include "tls/certificate.h"
#include "tls/known_hubs.h"

namespace mt::tls {
namespace {

namespace gx = grpc::experimental;

std::string ReadOption(const std::string& path, const std::string& flag) {
  try {
    return ReadFile(path);
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(flag + ": " + e.what());
  }
}

// Accepts the hub's certificate when its fingerprint is the pinned one or,
// without a pin, the one remembered for the address (remembering it the
// first time). The TLS handshake has already proved the hub holds the key.
class FingerprintVerifier : public gx::ExternalCertificateVerifier {
 public:
  FingerprintVerifier(std::shared_ptr<HubCertificateCheck> check, std::string address,
                      std::string pinned, std::string known_hubs_path)
      : check_(std::move(check)),
        address_(std::move(address)),
        pinned_(std::move(pinned)),
        known_(std::move(known_hubs_path)) {}

  bool Verify(gx::TlsCustomVerificationCheckRequest* request, std::function<void(grpc::Status)>,
              grpc::Status* status) override {
    HubCertificateCheck::Refusal r =
        Check(std::string(request->peer_cert().data(), request->peer_cert().size()));
    if (r.why.empty()) {
      *status = grpc::Status::OK;
    } else {
      *status = grpc::Status(grpc::StatusCode::UNAUTHENTICATED, r.why);
      check_->Refuse(std::move(r));
    }
    return true;  // decided synchronously
  }
  void Cancel(gx::TlsCustomVerificationCheckRequest*) override {}

 private:
  // An empty `why` to accept, else the reason to refuse.
  HubCertificateCheck::Refusal Check(const std::string& cert_pem) {
    std::string seen;
    try {
      seen = Fingerprint(cert_pem);
    } catch (const std::exception& e) {
      return {"the hub at " + address_ + " presented no usable certificate: " + e.what(), "", ""};
    }
    if (!pinned_.empty()) {
      if (seen == pinned_) return {};
      return {"the hub at " + address_ + " presented certificate " + seen +
                  ", not the one pinned with --hub-fingerprint (" + pinned_ +
                  "). Check the fingerprint mthub printed when it started.",
              seen, pinned_};
    }
    try {
      const std::string known = known_.RememberIfNew(address_, seen);
      if (known == seen) {
        if (!remembered_logged_) {
          spdlog::info("hub at {}: certificate {} (known hubs: {})", address_, seen, known_.path());
          remembered_logged_ = true;
        }
        return {};
      }
      return {"the hub at " + address_ + " presented certificate " + seen + ", but " +
                  known_.path() + " remembers " + known +
                  " for it. Someone may be between this worker and the hub, or the hub made a "
                  "new certificate. If you trust the change, remove the line for " +
                  address_ + " from " + known_.path() + " or run with --hub-fingerprint " + seen +
                  ".",
              seen, known};
    } catch (const std::exception& e) {
      return {"cannot check the hub's certificate against " + known_.path() + ": " + e.what(), seen,
              ""};
    }
  }

  std::shared_ptr<HubCertificateCheck> check_;
  std::string address_;
  std::string pinned_;
  KnownHubs known_;
  bool remembered_logged_ = false;
};

}  // namespace

ChannelSecurity MakeChannelSecurity(const ClientOptions& options, const std::string& address) {
  ChannelSecurity security;
  const bool has_identity = !options.cert_path.empty() || !options.key_path.empty();
  if (options.insecure) {
    if (!options.ca_path.empty() || !options.hub_fingerprint.empty() || has_identity)
      throw std::invalid_argument(
          "--insecure turns TLS off; it cannot go with --tls-ca, "
          "--hub-fingerprint, --tls-cert or --tls-key");
    security.credentials = grpc::InsecureChannelCredentials();
    security.description = "plaintext (--insecure)";
    return security;
  }
  if (!options.ca_path.empty() && !options.hub_fingerprint.empty())
    throw std::invalid_argument(
        "--tls-ca and --hub-fingerprint are two ways to trust the hub; "
        "give one");
  if (options.cert_path.empty() != options.key_path.empty())
    throw std::invalid_argument("--tls-cert and --tls-key go together: give both or neither");
  std::string cert, key;
  if (has_identity) {
    cert = ReadOption(options.cert_path, "--tls-cert");
    key = ReadOption(options.key_path, "--tls-key");
    CheckKeyMatchesCertificate(cert, key, "--tls-cert/--tls-key");
  }

  if (!options.ca_path.empty()) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = ReadOption(options.ca_path, "--tls-ca");
    CheckCertificates(ssl.pem_root_certs, "--tls-ca " + options.ca_path);
    ssl.pem_private_key = key;
    ssl.pem_cert_chain = cert;
    security.credentials = grpc::SslCredentials(ssl);
    security.description = "TLS, hub certificate checked against " + options.ca_path;
    return security;
  }

  std::string pinned, known_hubs;
  if (!options.hub_fingerprint.empty()) {
    pinned = NormalizeFingerprint(options.hub_fingerprint);
    security.description = "TLS, hub certificate pinned to " + pinned;
  } else {
    known_hubs = options.known_hubs_path.empty() ? DefaultStateDir() + "/known_hubs"
                                                 : options.known_hubs_path;
    security.description = "TLS, hub certificate trusted on first use (" + known_hubs + ")";
  }
  security.check = std::make_shared<HubCertificateCheck>();
  gx::TlsChannelCredentialsOptions tls;
  // The chain is not checked against any CA (a hub's certificate is its
  // own); the verifier's fingerprint check takes its place, and no host
  // name is checked since the fingerprint names the hub exactly.
  tls.set_verify_server_certs(false);
  tls.set_check_call_host(false);
  tls.set_certificate_verifier(gx::ExternalCertificateVerifier::Create<FingerprintVerifier>(
      security.check, address, pinned, known_hubs));
  if (has_identity) {
    tls.set_certificate_provider(std::make_shared<gx::StaticDataCertificateProvider>(
        std::vector<gx::IdentityKeyCertPair>{{key, cert}}));
    tls.watch_identity_key_cert_pairs();
  }
  security.credentials = gx::TlsCredentials(tls);
  if (!security.credentials) throw std::runtime_error("TLS: gRPC refused the channel options");
  return security;
}

}  // namespace mt::tls
