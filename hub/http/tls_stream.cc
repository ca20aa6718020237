#include "hub/http/tls_stream.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <stdexcept>

namespace mt::http {
namespace {

int SocketOf(BIO* bio) { return static_cast<int>(reinterpret_cast<intptr_t>(BIO_get_data(bio))); }

// OpenSSL's socket BIO writes with write(), which raises SIGPIPE when the
// peer has gone; this one sends with MSG_NOSIGNAL.
int BioWrite(BIO* bio, const char* data, int size) {
  BIO_clear_retry_flags(bio);
  for (;;) {
    const ssize_t n = send(SocketOf(bio), data, static_cast<size_t>(size), MSG_NOSIGNAL);
    if (n >= 0) return static_cast<int>(n);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) BIO_set_retry_write(bio);
    return -1;
  }
}

int BioRead(BIO* bio, char* buffer, int size) {
  BIO_clear_retry_flags(bio);
  for (;;) {
    const ssize_t n = recv(SocketOf(bio), buffer, static_cast<size_t>(size), 0);
    if (n >= 0) return static_cast<int>(n);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) BIO_set_retry_read(bio);
    return -1;
  }
}

long BioCtrl(BIO*, int command, long, void*) { return command == BIO_CTRL_FLUSH ? 1 : 0; }

int BioCreate(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

std::string OpenSslError() {
  const unsigned long e = ERR_get_error();
  char text[256] = "unknown OpenSSL error";
  if (e != 0) ERR_error_string_n(e, text, sizeof text);
  ERR_clear_error();
  return text;
}

class TlsStream final : public ByteStream {
 public:
  TlsStream(int fd, SSL* ssl) : ByteStream(fd), ssl_(ssl) {}
  ~TlsStream() override { SSL_free(ssl_); }

  Io Handshake() override {
    if (!checked_first_byte_) {
      char first = 0;
      const ssize_t n = recv(fd(), &first, 1, MSG_PEEK);
      if (n == 0) return Io::kClosed;
      if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? Io::kWantRead : Io::kError;
      checked_first_byte_ = true;
      // A TLS record of the handshake starts 0x16; a request line, a letter.
      if (std::isupper(static_cast<unsigned char>(first))) return Io::kNotTls;
    }
    ERR_clear_error();
    const int r = SSL_accept(ssl_);
    return r == 1 ? Io::kDone : Outcome(r);
  }

  Io Read(char* buffer, size_t capacity, size_t& got) override {
    got = 0;
    ERR_clear_error();
    const int r = SSL_read_ex(ssl_, buffer, capacity, &got);
    return r == 1 ? Io::kDone : Outcome(r);
  }

  Io Write(const char* data, size_t size, size_t& wrote) override {
    wrote = 0;
    ERR_clear_error();
    const int r = SSL_write_ex(ssl_, data, size, &wrote);
    return r == 1 ? Io::kDone : Outcome(r);
  }

  uint64_t bytes_moved() const override {
    // One BIO both ways (SSL_set_bio(ssl, bio, bio)); OpenSSL counts what
    // passes through it, the handshake's flights too.
    BIO* socket = SSL_get_rbio(ssl_);
    return ByteStream::bytes_moved() +
           (socket ? BIO_number_read(socket) + BIO_number_written(socket) : 0);
  }

  void Shutdown() override {
    ERR_clear_error();
    if (SSL_is_init_finished(ssl_)) SSL_shutdown(ssl_);  // close_notify, not waiting for the peer's
    ERR_clear_error();
    ByteStream::Shutdown();
  }

 private:
  Io Outcome(int r) {
    switch (SSL_get_error(ssl_, r)) {
      case SSL_ERROR_WANT_READ: return Io::kWantRead;
      case SSL_ERROR_WANT_WRITE: return Io::kWantWrite;
      case SSL_ERROR_ZERO_RETURN: return Io::kClosed;
      default: ERR_clear_error(); return Io::kError;
    }
  }

  SSL* ssl_;
  bool checked_first_byte_ = false;
};

}  // namespace

TlsContext::TlsContext(const std::string& cert_pem, const std::string& key_pem) {
  ctx_ = SSL_CTX_new(TLS_server_method());
  socket_bio_ = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "mt dashboard socket");
  if (!ctx_ || !socket_bio_) {
    Release();
    throw std::runtime_error("cannot set up TLS for the dashboard: " + OpenSslError());
  }
  BIO_meth_set_write(socket_bio_, BioWrite);
  BIO_meth_set_read(socket_bio_, BioRead);
  BIO_meth_set_ctrl(socket_bio_, BioCtrl);
  BIO_meth_set_create(socket_bio_, BioCreate);
  SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
  // Partial writes: the poll loop writes what the socket takes. Buffers
  // released while idle: an idle TLS connection costs a few KB, not 34.
  SSL_CTX_set_mode(ctx_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                             SSL_MODE_RELEASE_BUFFERS);
  SSL_CTX_set_options(ctx_, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION);
  // The server's session cache is bounded too (OpenSSL's default: 20,480).
  SSL_CTX_sess_set_cache_size(ctx_, 256);

  BIO* certs = BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size()));
  X509* leaf = certs ? PEM_read_bio_X509(certs, nullptr, nullptr, nullptr) : nullptr;
  bool ok = leaf && SSL_CTX_use_certificate(ctx_, leaf) == 1;
  X509_free(leaf);
  while (ok) {  // the rest of the chain, if any
    X509* next = PEM_read_bio_X509(certs, nullptr, nullptr, nullptr);
    if (!next) break;
    ok = SSL_CTX_add0_chain_cert(ctx_, next) == 1;
    if (!ok) X509_free(next);
  }
  BIO_free(certs);
  BIO* key_bio = BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
  EVP_PKEY* key = key_bio ? PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr) : nullptr;
  BIO_free(key_bio);
  ok = ok && key && SSL_CTX_use_PrivateKey(ctx_, key) == 1 && SSL_CTX_check_private_key(ctx_) == 1;
  EVP_PKEY_free(key);
  if (!ok) {
    const std::string why = OpenSslError();
    Release();
    throw std::invalid_argument("the dashboard cannot use the hub's certificate and key: " + why);
  }
  ERR_clear_error();
}

TlsContext::~TlsContext() { Release(); }

void TlsContext::Release() {
  SSL_CTX_free(ctx_);
  BIO_meth_free(socket_bio_);
  ctx_ = nullptr;
  socket_bio_ = nullptr;
}

std::unique_ptr<ByteStream> TlsContext::Accept(int fd) {
  SSL* ssl = SSL_new(ctx_);
  BIO* bio = ssl ? BIO_new(socket_bio_) : nullptr;
  if (!bio) {
    SSL_free(ssl);
    ERR_clear_error();
    return nullptr;
  }
  BIO_set_data(bio, reinterpret_cast<void*>(static_cast<intptr_t>(fd)));
  SSL_set_bio(ssl, bio, bio);
  return std::make_unique<TlsStream>(fd, ssl);
}

}  // namespace mt::http
