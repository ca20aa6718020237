// X.509 pieces the hub and worker need, over OpenSSL: a self-signed
// certificate for a hub that was given none, and the SHA-256 fingerprint
// that workers pin or remember (the same text `openssl x509 -noout
// -fingerprint -sha256` prints, after "SHA256:").
#pragma once

#include <string>
#include <vector>

namespace mt::tls {

struct CertificateAndKey {
  std::string cert_pem;
  std::string key_pem;  // PKCS#8, unencrypted: the file holding it is 0600
};

// An ECDSA P-256 key and a certificate for it, signed by itself, valid from
// an hour ago for 20 years, with CN `common_name` and a subjectAltName per
// entry of `names` (IP addresses become IP entries, the rest DNS entries).
// It may serve as its own trust anchor (`--tls-ca` on a worker).
CertificateAndKey GenerateSelfSigned(const std::string& common_name,
                                     const std::vector<std::string>& names);

// "SHA256:AB:CD:..." over the DER encoding of the first certificate in
// `cert_pem`. Throws std::invalid_argument when there is none.
std::string Fingerprint(const std::string& cert_pem);

// A fingerprint as a user may type it ("SHA256:ab:cd...", "ab:cd...",
// "abcd...", or openssl's "sha256 Fingerprint=AB:CD...") in the canonical
// form Fingerprint() returns. Throws std::invalid_argument saying what is
// wrong.
std::string NormalizeFingerprint(const std::string& text);

// Checks that `cert_pem` holds a certificate and `key_pem` its private key.
// Throws std::invalid_argument naming `what` ("--tls-cert") otherwise.
void CheckKeyMatchesCertificate(const std::string& cert_pem, const std::string& key_pem,
                                const std::string& what);

// Checks that `pem` holds at least one certificate (a CA bundle). Throws
// std::invalid_argument naming `what` ("--tls-ca FILE") otherwise.
void CheckCertificates(const std::string& pem, const std::string& what);

// This machine's host name, "localhost" and the addresses of its up
// interfaces: the names a worker may dial to reach a hub here.
std::vector<std::string> LocalNames();

}  // namespace mt::tls
