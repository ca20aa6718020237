#include "core/util/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace mt {
namespace {

std::runtime_error Failure(const std::string& what, const std::string& path) {
  return std::runtime_error(path + ": " + what + ": " + std::strerror(errno));
}

std::string DirectoryOf(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

void WriteFileAtomically(const std::string& path, const std::string& bytes, int mode) {
  // Unique per call, so threads (several hubs in one test process) and
  // processes writing one path at once never share a temporary file.
  static std::atomic<uint64_t> calls{0};
  const std::string tmp = path + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(calls++);
  const int fd =
      open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, static_cast<mode_t>(mode));
  if (fd < 0) throw Failure("cannot create", tmp);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const auto err = Failure("write failed", tmp);
      close(fd);
      unlink(tmp.c_str());
      throw err;
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    const auto err = Failure("cannot flush", tmp);
    unlink(tmp.c_str());
    throw err;
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const auto err = Failure("cannot rename into place", path);
    unlink(tmp.c_str());
    throw err;
  }
  const int dir = open(DirectoryOf(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    fsync(dir);  // best effort: the rename is already visible
    close(dir);
  }
}

void EnsureWritableDirectory(const std::string& dir, const std::string& what) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error(what + " " + dir + ": cannot create: " + ec.message());
  const std::string probe = dir + "/.write-test";
  try {
    WriteFileAtomically(probe, "ok");
  } catch (const std::exception& e) {
    throw std::runtime_error(what + " " + dir + ": not writable: " + e.what());
  }
  std::filesystem::remove(probe, ec);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Failure("cannot open", path);
  std::stringstream s;
  s << in.rdbuf();
  if (in.bad()) throw Failure("read failed", path);
  return s.str();
}

}  // namespace mt
