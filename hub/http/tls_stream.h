// The dashboard's TLS, over OpenSSL directly: a server context with the
// hub's certificate and key (tls/hub_identity.h), and non-blocking
// streams over accepted sockets, driven by the server's poll loop.
#pragma once

#include <memory>
#include <string>

#include "hub/http/byte_stream.h"

typedef struct ssl_ctx_st SSL_CTX;
typedef struct bio_method_st BIO_METHOD;

namespace mt::http {

class TlsContext {
 public:
  // Throws std::invalid_argument when the PEM pair is unusable.
  TlsContext(const std::string& cert_pem, const std::string& key_pem);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // A server-side TLS stream over the accepted, non-blocking socket `fd`
  // (owned from now on; null, and the socket not taken, when OpenSSL
  // cannot make one). Its Handshake says kNotTls when the peer's first
  // byte is plain HTTP's, so the server can tell it to use https://.
  std::unique_ptr<ByteStream> Accept(int fd);

 private:
  void Release();

  SSL_CTX* ctx_ = nullptr;
  BIO_METHOD* socket_bio_ = nullptr;  // OpenSSL's, but without SIGPIPE
};

}  // namespace mt::http
