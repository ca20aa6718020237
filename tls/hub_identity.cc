#include "tls/hub_identity.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>

#include "core/util/atomic_file.h"
#include "tls/certificate.h"

namespace mt::tls {
namespace {

namespace fs = std::filesystem;

// Held while a pair is looked for and made, so that hubs starting at once in
// one state directory agree on one pair.
class DirectoryLock {
 public:
  explicit DirectoryLock(const std::string& path)
      : fd_(open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)) {
    if (fd_ < 0 || flock(fd_, LOCK_EX) != 0)
      throw std::runtime_error("cannot lock " + path + " to make the hub's TLS certificate");
  }
  ~DirectoryLock() {
    if (fd_ >= 0) close(fd_);  // releases the lock
  }
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_;
};

HubIdentity FromFiles(const std::string& cert_path, const std::string& key_path,
                      const std::string& what) {
  HubIdentity id;
  try {
    id.cert_pem = ReadFile(cert_path);
    id.key_pem = ReadFile(key_path);
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(what + ": " + e.what());
  }
  CheckKeyMatchesCertificate(id.cert_pem, id.key_pem, what);
  id.cert_path = cert_path;
  id.fingerprint = Fingerprint(id.cert_pem);
  return id;
}

}  // namespace

HubIdentity LoadOrCreateHubIdentity(const ServerOptions& options) {
  if (options.cert_path.empty() != options.key_path.empty())
    throw std::invalid_argument("--tls-cert and --tls-key go together: give both or neither");
  if (!options.cert_path.empty())
    return FromFiles(options.cert_path, options.key_path, "--tls-cert/--tls-key");

  const std::string dir = options.state_dir.empty() ? DefaultStateDir() : options.state_dir;
  EnsureWritableDirectory(dir, "--state-dir");
  const std::string cert = dir + "/hub-cert.pem";
  const std::string key = dir + "/hub-key.pem";
  DirectoryLock lock(dir + "/.hub-identity.lock");
  const bool have_cert = fs::exists(cert);
  const bool have_key = fs::exists(key);
  if (have_cert && have_key) return FromFiles(cert, key, "the hub's certificate in " + dir);
  if (have_cert)
    throw std::runtime_error(dir + " holds " + cert + " but not its key " + key +
                             "; restore the key, or remove the certificate to make a new pair "
                             "(workers that remembered the old one will then refuse the hub)");
  CertificateAndKey made = GenerateSelfSigned("mthub", LocalNames());
  // The key first: a certificate without its key is refused above, while a
  // lone key (a first start cut short) is simply made anew.
  WriteFileAtomically(key, made.key_pem, 0600);
  WriteFileAtomically(cert, made.cert_pem, 0644);
  HubIdentity id{made.cert_pem, made.key_pem, cert, Fingerprint(made.cert_pem), true};
  return id;
}

}  // namespace mt::tls
