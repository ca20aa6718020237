// The hub's self-made certificate and the fingerprints workers pin: checked
// against OpenSSL's own view of the certificate, not against our formatting.
#include "tls/certificate.h"

#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <memory>
#include <regex>
#include <stdexcept>

namespace mt::tls {
namespace {

std::unique_ptr<X509, void (*)(X509*)> Parse(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* x = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return {x, X509_free};
}

TEST(Certificate, SelfSignedCoversTheNamesGivenAndVerifiesAgainstItself) {
  const CertificateAndKey made = GenerateSelfSigned("mthub", {"localhost", "127.0.0.1", "::1"});
  auto cert = Parse(made.cert_pem);
  ASSERT_NE(cert, nullptr);
  EXPECT_EQ(X509_check_host(cert.get(), "localhost", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_ip_asc(cert.get(), "127.0.0.1", 0), 1);
  EXPECT_EQ(X509_check_ip_asc(cert.get(), "::1", 0), 1);
  EXPECT_NE(X509_check_host(cert.get(), "elsewhere.example", 0, 0, nullptr), 1);
  EXPECT_NE(X509_check_ip_asc(cert.get(), "10.1.2.3", 0), 1);
  // Signed by its own key: a worker can hold it as its only trusted root.
  EVP_PKEY* pub = X509_get0_pubkey(cert.get());
  EXPECT_EQ(X509_verify(cert.get(), pub), 1);
  EXPECT_NO_THROW(CheckKeyMatchesCertificate(made.cert_pem, made.key_pem, "made"));
}

TEST(Certificate, FingerprintIsTheSha256OfTheDerEncoding) {
  const CertificateAndKey made = GenerateSelfSigned("mthub", {"localhost"});
  auto cert = Parse(made.cert_pem);
  unsigned char digest[32];
  unsigned int n = 0;
  ASSERT_EQ(X509_digest(cert.get(), EVP_sha256(), digest, &n), 1);
  const std::string fp = Fingerprint(made.cert_pem);
  ASSERT_TRUE(std::regex_match(fp, std::regex("SHA256(:[0-9A-F]{2}){32}"))) << fp;
  for (unsigned i = 0; i < n; ++i)
    EXPECT_EQ(std::stoi(fp.substr(7 + 3 * i, 2), nullptr, 16), digest[i]) << "byte " << i;
  // Two certificates never share a fingerprint (random key and serial).
  EXPECT_NE(fp, Fingerprint(GenerateSelfSigned("mthub", {"localhost"}).cert_pem));
  EXPECT_THROW(Fingerprint("not a certificate"), std::invalid_argument);
}

TEST(Certificate, FingerprintsAreAcceptedAsUsersTypeThem) {
  const std::string fp = Fingerprint(GenerateSelfSigned("mthub", {}).cert_pem);
  std::string hex = fp.substr(7);
  hex.erase(std::remove(hex.begin(), hex.end(), ':'), hex.end());
  std::string lower = hex;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  EXPECT_EQ(NormalizeFingerprint(fp), fp);
  EXPECT_EQ(NormalizeFingerprint(fp.substr(7)), fp);
  EXPECT_EQ(NormalizeFingerprint(lower), fp);
  EXPECT_EQ(NormalizeFingerprint("sha256 Fingerprint=" + fp.substr(7)), fp);
  EXPECT_THROW(NormalizeFingerprint(fp.substr(0, fp.size() - 3)), std::invalid_argument);
  EXPECT_THROW(NormalizeFingerprint("SHA256:" + std::string(64, 'g')), std::invalid_argument);
  EXPECT_THROW(NormalizeFingerprint(""), std::invalid_argument);
}

TEST(Certificate, AKeyFromAnotherCertificateIsRefusedByName) {
  const CertificateAndKey a = GenerateSelfSigned("a", {});
  const CertificateAndKey b = GenerateSelfSigned("b", {});
  try {
    CheckKeyMatchesCertificate(a.cert_pem, b.key_pem, "--tls-cert");
    FAIL() << "a foreign key was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--tls-cert"), std::string::npos) << e.what();
  }
  EXPECT_THROW(CheckKeyMatchesCertificate(a.cert_pem, "junk", "k"), std::invalid_argument);
  EXPECT_THROW(CheckCertificates("junk", "--tls-ca x"), std::invalid_argument);
}

TEST(Certificate, LocalNamesHaveLoopbackAndNoDuplicates) {
  const std::vector<std::string> names = LocalNames();
  EXPECT_EQ(names.front(), "localhost");
  EXPECT_NE(std::find(names.begin(), names.end(), "127.0.0.1"), names.end());
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
}

}  // namespace
}  // namespace mt::tls
