// Trust on first use, as SSH's known_hosts: one line per hub address
// ("HOST:PORT SHA256:AB:..."), the fingerprint seen the first time a worker
// reached that address.
#pragma once

#include <optional>
#include <string>

namespace mt::tls {

class KnownHubs {
 public:
  explicit KnownHubs(std::string path) : path_(std::move(path)) {}

  // The fingerprint remembered for `address`, if any. A missing file is an
  // empty one. Throws std::runtime_error when the file cannot be read.
  std::optional<std::string> Find(const std::string& address) const;
  // Remembers `fingerprint` for `address` unless a fingerprint is already
  // there; returns the one remembered afterwards (another worker may have
  // been first). Creates the file and its directory; workers writing at once
  // are serialised by a lock file beside it.
  std::string RememberIfNew(const std::string& address, const std::string& fingerprint);

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace mt::tls
