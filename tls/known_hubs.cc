#include "tls/known_hubs.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "core/util/atomic_file.h"

namespace mt::tls {
namespace {

std::optional<std::string> FindIn(const std::string& text, const std::string& address) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string a, fp;
    if (fields >> a >> fp && a == address) return fp;
  }
  return std::nullopt;
}

std::string ReadIfExists(const std::string& path) {
  if (!std::filesystem::exists(path)) return "";
  return ReadFile(path);
}

}  // namespace

std::optional<std::string> KnownHubs::Find(const std::string& address) const {
  return FindIn(ReadIfExists(path_), address);
}

std::string KnownHubs::RememberIfNew(const std::string& address, const std::string& fingerprint) {
  const std::filesystem::path dir = std::filesystem::path(path_).parent_path();
  if (!dir.empty()) EnsureWritableDirectory(dir.string(), "the known hubs file's directory");
  const std::string lock_path = path_ + ".lock";
  const int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0 || flock(fd, LOCK_EX) != 0) {
    if (fd >= 0) close(fd);
    throw std::runtime_error("cannot lock " + lock_path);
  }
  try {
    std::string text = ReadIfExists(path_);
    if (auto known = FindIn(text, address)) {
      close(fd);
      return *known;
    }
    if (text.empty())
      text =
          "# Hubs this worker has met: address and certificate fingerprint (mtworker, trust on "
          "first use).\n# Remove a line to accept a hub's new certificate.\n";
    if (text.back() != '\n') text += '\n';
    text += address + " " + fingerprint + "\n";
    WriteFileAtomically(path_, text, 0600);
  } catch (...) {
    close(fd);
    throw;
  }
  close(fd);
  return fingerprint;
}

}  // namespace mt::tls
