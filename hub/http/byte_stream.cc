#include "hub/http/byte_stream.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace mt::http {

ByteStream::~ByteStream() { close(fd_); }

Io ByteStream::Read(char* buffer, size_t capacity, size_t& got) {
  return ReadPlain(buffer, capacity, got);
}

Io ByteStream::Write(const char* data, size_t size, size_t& wrote) {
  return WritePlain(data, size, wrote);
}

void ByteStream::Shutdown() { shutdown(fd_, SHUT_WR); }

Io ByteStream::ReadPlain(char* buffer, size_t capacity, size_t& got) {
  got = 0;
  for (;;) {
    const ssize_t n = recv(fd_, buffer, capacity, 0);
    if (n > 0) {
      got = static_cast<size_t>(n);
      plain_bytes_ += got;
      return Io::kDone;
    }
    if (n == 0) return Io::kClosed;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK ? Io::kWantRead : Io::kError;
  }
}

Io ByteStream::WritePlain(const char* data, size_t size, size_t& wrote) {
  wrote = 0;
  for (;;) {
    // MSG_NOSIGNAL: a peer gone mid-answer is an error here, not SIGPIPE.
    const ssize_t n = send(fd_, data, size, MSG_NOSIGNAL);
    if (n >= 0) {
      wrote = static_cast<size_t>(n);
      plain_bytes_ += wrote;
      return Io::kDone;
    }
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK ? Io::kWantWrite : Io::kError;
  }
}

std::unique_ptr<ByteStream> MakePlainStream(int fd) { return std::make_unique<ByteStream>(fd); }

}  // namespace mt::http
