#include "tls/certificate.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <stdexcept>

namespace mt::tls {
namespace {

template <class T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using Bio = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using Key = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using Cert = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using Extension = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION, X509_EXTENSION_free>>;
using BigNum = std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>>;

// OpenSSL's queued reason, for messages (and an empty queue afterwards).
std::string OpenSslError() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unknown OpenSSL error";
  char text[256];
  ERR_error_string_n(code, text, sizeof text);
  return text;
}

void Require(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("TLS: ") + what + ": " + OpenSslError());
}

Bio ReadBio(const std::string& bytes) {
  Bio bio(BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size())));
  Require(bio != nullptr, "cannot allocate a buffer");
  return bio;
}

std::string BioText(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(n));
}

Cert FirstCertificate(const std::string& pem) {
  Bio bio = ReadBio(pem);
  Cert cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  ERR_clear_error();
  return cert;
}

bool IsIpAddress(const std::string& name) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, name.c_str(), buf) == 1 || inet_pton(AF_INET6, name.c_str(), buf) == 1;
}

void AddExtension(X509* cert, X509V3_CTX* ctx, int nid, const std::string& value) {
  Extension ext(X509V3_EXT_conf_nid(nullptr, ctx, nid, value.c_str()));
  Require(ext != nullptr, "cannot build a certificate extension");
  Require(X509_add_ext(cert, ext.get(), -1) == 1, "cannot add a certificate extension");
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

CertificateAndKey GenerateSelfSigned(const std::string& common_name,
                                     const std::vector<std::string>& names) {
  Key key(EVP_EC_gen("P-256"));
  Require(key != nullptr, "cannot generate a P-256 key");
  Cert cert(X509_new());
  Require(cert != nullptr, "cannot allocate a certificate");
  Require(X509_set_version(cert.get(), 2) == 1, "cannot set the certificate version");
  // A random 127-bit serial, as RFC 5280 asks of a CA: two certificates this
  // code makes never share one.
  unsigned char serial[16];
  Require(RAND_bytes(serial, sizeof serial) == 1, "no randomness for a serial number");
  serial[0] &= 0x7f;
  BigNum bn(BN_bin2bn(serial, sizeof serial, nullptr));
  Require(bn && BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert.get())),
          "cannot set the serial number");
  // An hour back, for clocks a little behind the hub's.
  Require(X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600) != nullptr &&
              X509_gmtime_adj(X509_getm_notAfter(cert.get()), 20L * 365 * 24 * 3600) != nullptr,
          "cannot set the validity");
  Require(X509_set_pubkey(cert.get(), key.get()) == 1, "cannot set the public key");
  X509_NAME* subject = X509_get_subject_name(cert.get());
  Require(X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_UTF8,
                                     reinterpret_cast<const unsigned char*>(common_name.c_str()),
                                     -1, -1, 0) == 1,
          "cannot set the common name");
  Require(X509_set_issuer_name(cert.get(), subject) == 1, "cannot set the issuer");

  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert.get(), cert.get(), nullptr, nullptr, 0);
  // Its own CA, so that a worker can hold it as the one trusted root.
  AddExtension(cert.get(), &ctx, NID_basic_constraints, "critical,CA:TRUE,pathlen:0");
  AddExtension(cert.get(), &ctx, NID_key_usage, "critical,digitalSignature,keyCertSign");
  AddExtension(cert.get(), &ctx, NID_ext_key_usage, "serverAuth,clientAuth");
  AddExtension(cert.get(), &ctx, NID_subject_key_identifier, "hash");
  std::string alt;
  for (const auto& name : names) {
    if (name.empty() || name.find(',') != std::string::npos) continue;
    alt += (alt.empty() ? "" : ",") + std::string(IsIpAddress(name) ? "IP:" : "DNS:") + name;
  }
  if (!alt.empty()) AddExtension(cert.get(), &ctx, NID_subject_alt_name, alt);
  Require(X509_sign(cert.get(), key.get(), EVP_sha256()) > 0, "cannot sign the certificate");

  Bio cert_out(BIO_new(BIO_s_mem()));
  Bio key_out(BIO_new(BIO_s_mem()));
  Require(cert_out && key_out, "cannot allocate a buffer");
  Require(PEM_write_bio_X509(cert_out.get(), cert.get()) == 1, "cannot encode the certificate");
  Require(PEM_write_bio_PrivateKey(key_out.get(), key.get(), nullptr, nullptr, 0, nullptr,
                                   nullptr) == 1,
          "cannot encode the key");
  return {BioText(cert_out.get()), BioText(key_out.get())};
}

std::string Fingerprint(const std::string& cert_pem) {
  Cert cert = FirstCertificate(cert_pem);
  if (!cert) throw std::invalid_argument("no PEM certificate found");
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  Require(X509_digest(cert.get(), EVP_sha256(), digest, &size) == 1, "cannot hash the certificate");
  static const char kHex[] = "0123456789ABCDEF";
  std::string out = "SHA256:";
  for (unsigned i = 0; i < size; ++i) {
    if (i > 0) out += ':';
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

std::string NormalizeFingerprint(const std::string& text) {
  std::string s = text;
  const auto eq = s.find('=');
  if (eq != std::string::npos) s = s.substr(eq + 1);  // openssl's "sha256 Fingerprint=..."
  if (s.size() >= 7) {
    std::string prefix = s.substr(0, 7);
    std::transform(prefix.begin(), prefix.end(), prefix.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (prefix == "sha256:") s = s.substr(7);
  }
  std::string hex;
  for (char c : s) {
    if (c == ':' || std::isspace(static_cast<unsigned char>(c))) continue;
    if (HexDigit(c) < 0)
      throw std::invalid_argument("fingerprint '" + text + "': '" + std::string(1, c) +
                                  "' is not a hex digit (expected SHA256:AB:CD:... as mthub "
                                  "prints it)");
    hex += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  if (hex.size() != 64)
    throw std::invalid_argument("fingerprint '" + text + "' has " + std::to_string(hex.size() / 2) +
                                " bytes; a SHA-256 fingerprint has 32 (SHA256:AB:CD:... as "
                                "mthub prints it)");
  std::string out = "SHA256:";
  for (size_t i = 0; i < hex.size(); i += 2) out += (i ? ":" : "") + hex.substr(i, 2);
  return out;
}

void CheckKeyMatchesCertificate(const std::string& cert_pem, const std::string& key_pem,
                                const std::string& what) {
  Cert cert = FirstCertificate(cert_pem);
  if (!cert) throw std::invalid_argument(what + ": no PEM certificate in it");
  Bio bio = ReadBio(key_pem);
  Key key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  ERR_clear_error();
  if (!key) throw std::invalid_argument(what + ": no unencrypted PEM private key in the key file");
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    throw std::invalid_argument(what + ": the private key does not belong to the certificate");
  }
}

void CheckCertificates(const std::string& pem, const std::string& what) {
  if (!FirstCertificate(pem)) throw std::invalid_argument(what + ": no PEM certificate in it");
}

std::vector<std::string> LocalNames() {
  std::vector<std::string> names{"localhost"};
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0 && host[0] != '\0') names.emplace_back(host);
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) == 0) {
    for (ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
      if (a->ifa_addr == nullptr || !(a->ifa_flags & IFF_UP)) continue;
      char text[INET6_ADDRSTRLEN] = {};
      if (a->ifa_addr->sa_family == AF_INET) {
        inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, text,
                  sizeof text);
      } else if (a->ifa_addr->sa_family == AF_INET6) {
        const auto* v6 = reinterpret_cast<sockaddr_in6*>(a->ifa_addr);
        if (IN6_IS_ADDR_LINKLOCAL(&v6->sin6_addr)) continue;  // needs a zone; no one dials it
        inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
      } else {
        continue;
      }
      names.emplace_back(text);
    }
    freeifaddrs(list);
  }
  if (std::find(names.begin(), names.end(), "127.0.0.1") == names.end())
    names.emplace_back("127.0.0.1");
  std::sort(names.begin() + 1, names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace mt::tls
