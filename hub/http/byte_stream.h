// A non-blocking connected socket as the dashboard's server reads and
// writes it: plain TCP, or TLS over it (tls_stream.h). Every call returns
// at once, saying what it waits for when it cannot go on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace mt::http {

enum class Io {
  kDone,       // did something (read or wrote at least a byte, or finished)
  kWantRead,   // try again when the socket is readable
  kWantWrite,  // ... writable
  kClosed,     // the peer closed (reads: end of stream)
  kError,      // the connection is unusable
  kNotTls,     // a TLS stream's peer spoke plain HTTP (answer with WritePlain)
};

class ByteStream {
 public:
  explicit ByteStream(int fd) : fd_(fd) {}
  virtual ~ByteStream();  // closes the socket
  ByteStream(const ByteStream&) = delete;
  ByteStream& operator=(const ByteStream&) = delete;

  int fd() const { return fd_; }
  // Until kDone: the TLS handshake (plain: nothing to do).
  virtual Io Handshake() { return Io::kDone; }
  // kDone with got > 0, or why not.
  virtual Io Read(char* buffer, size_t capacity, size_t& got);
  // kDone with wrote > 0, or why not.
  virtual Io Write(const char* data, size_t size, size_t& wrote);
  // Tells the peer nothing more comes (TLS close_notify, then FIN).
  virtual void Shutdown();
  // Bytes on the socket itself, below any TLS: for a reply to a peer that
  // did not speak TLS, and for draining what a peer still sends.
  Io WritePlain(const char* data, size_t size, size_t& wrote);
  Io ReadPlain(char* buffer, size_t capacity, size_t& got);
  // Bytes that crossed the socket so far, both ways, TLS records and
  // handshake included: whether, and when, a connection last made progress.
  virtual uint64_t bytes_moved() const { return plain_bytes_; }

 private:
  int fd_;
  uint64_t plain_bytes_ = 0;  // by ReadPlain and WritePlain
};

std::unique_ptr<ByteStream> MakePlainStream(int fd);

}  // namespace mt::http
