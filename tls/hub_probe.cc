#include "tls/hub_probe.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace mt::tls {
namespace {

using Cause = ProbeResult::Cause;

// A connected socket, or why there is none.
struct Connection {
  int fd = -1;
  Cause failure = Cause::kNone;
  std::string detail;
  ~Connection() {
    if (fd >= 0) close(fd);
  }
};

void SplitTarget(const std::string& target, std::string& host, std::string& port) {
  const size_t colon = target.rfind(':');
  host = target.substr(0, colon);
  port = colon == std::string::npos ? "50051" : target.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
}

void Connect(const std::string& host, const std::string& port, std::chrono::milliseconds timeout,
             Connection& c) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    c.failure = Cause::kUnreachable;
    c.detail = gai_strerror(rc);
    return;
  }
  c.failure = Cause::kUnreachable;
  c.detail = "no answer";
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) continue;
    int error = 0;
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      error = errno;
      if (error == EINPROGRESS) {
        pollfd p{fd, POLLOUT, 0};
        socklen_t len = sizeof(error);
        if (poll(&p, 1, static_cast<int>(timeout.count())) == 1)
          getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len);
        else
          error = ETIMEDOUT;
      }
    }
    if (error == 0) {
      // Blocking from here on, each read and write bounded by `timeout`.
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      const timeval tv{static_cast<time_t>(timeout.count() / 1000),
                       static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
      setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
      c.fd = fd;
      c.failure = Cause::kNone;
      c.detail.clear();
      break;
    }
    close(fd);
    if (error == ECONNREFUSED) {
      c.failure = Cause::kConnectionRefused;
      c.detail = std::strerror(error);
    } else if (c.failure != Cause::kConnectionRefused) {
      c.detail = std::strerror(error);
    }
  }
  freeaddrinfo(found);
}

// Whether the peer answers HTTP/2's preface in plaintext: a gRPC server
// sends its SETTINGS frame (type 4) first.
bool SpeaksPlaintextHttp2(int fd) {
  static const char kPreface[] =
      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
      "\x00\x00\x00\x04\x00\x00\x00\x00\x00";  // an empty SETTINGS frame
  if (send(fd, kPreface, sizeof(kPreface) - 1, MSG_NOSIGNAL) < 0) return false;
  unsigned char head[9];
  size_t got = 0;
  while (got < 4) {
    const ssize_t n = recv(fd, head + got, sizeof(head) - got, 0);
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
  }
  return head[3] == 0x04;
}

// What a TLS handshake showed, as seen from this side.
struct Handshake {
  bool server_hello = false;           // the peer speaks TLS
  bool certificate_requested = false;  // ... and asked for this worker's certificate
  int alert = -1;                      // the alert it sent, if any
  bool completed = false;
  bool closed_by_hub = false;  // completed, then the hub closed the connection
  long verify_result = X509_V_OK;
  std::string error;  // OpenSSL's reason when it failed
};

void OnMessage(int write_p, int, int content_type, const void* buf, size_t len, SSL*, void* arg) {
  auto* h = static_cast<Handshake*>(arg);
  const auto* bytes = static_cast<const unsigned char*>(buf);
  if (write_p || len == 0) return;
  if (content_type == SSL3_RT_HANDSHAKE && bytes[0] == SSL3_MT_SERVER_HELLO) h->server_hello = true;
  if (content_type == SSL3_RT_HANDSHAKE && bytes[0] == SSL3_MT_CERTIFICATE_REQUEST)
    h->certificate_requested = true;
  if (content_type == SSL3_RT_ALERT && len >= 2) h->alert = bytes[1];
}

std::string OpenSslError() {
  std::string why;
  while (const unsigned long e = ERR_get_error()) {
    if (const char* r = ERR_reason_error_string(e)) why = r;  // the last is the first cause
  }
  return why.empty() ? "connection closed" : why;
}

template <class T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};

// Writes to a peer that has gone would raise SIGPIPE; held back while this
// thread probes, and any that came dropped.
class NoSigpipe {
 public:
  NoSigpipe() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~NoSigpipe() {
    const timespec zero{0, 0};
    while (sigtimedwait(&pipe_, nullptr, &zero) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t pipe_, old_;
};

Handshake TryTls(int fd, const std::string& host, const ClientOptions& options) {
  Handshake h;
  std::unique_ptr<SSL_CTX, Deleter<SSL_CTX, SSL_CTX_free>> ctx(SSL_CTX_new(TLS_client_method()));
  if (!ctx) return h;
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  static const unsigned char kAlpn[] = {2, 'h', '2'};
  SSL_CTX_set_alpn_protos(ctx.get(), kAlpn, sizeof(kAlpn));
  SSL_CTX_set_msg_callback(ctx.get(), OnMessage);
  const bool check_chain = !options.insecure && !options.ca_path.empty();
  if (check_chain) SSL_CTX_load_verify_locations(ctx.get(), options.ca_path.c_str(), nullptr);
  if (!options.insecure && !options.cert_path.empty()) {
    SSL_CTX_use_certificate_chain_file(ctx.get(), options.cert_path.c_str());
    SSL_CTX_use_PrivateKey_file(ctx.get(), options.key_path.c_str(), SSL_FILETYPE_PEM);
  }
  std::unique_ptr<SSL, Deleter<SSL, SSL_free>> ssl(SSL_new(ctx.get()));
  if (!ssl) return h;
  SSL_set_msg_callback_arg(ssl.get(), &h);
  SSL_set_fd(ssl.get(), fd);
  in6_addr ip{};
  const bool is_ip =
      inet_pton(AF_INET, host.c_str(), &ip) == 1 || inet_pton(AF_INET6, host.c_str(), &ip) == 1;
  if (!is_ip) SSL_set_tlsext_host_name(ssl.get(), host.c_str());
  if (check_chain) {
    SSL_set_verify(ssl.get(), SSL_VERIFY_PEER, nullptr);
    // The name gRPC checks: the host the worker dialled.
    if (is_ip)
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl.get()), host.c_str());
    else
      SSL_set1_host(ssl.get(), host.c_str());
  }
  ERR_clear_error();
  NoSigpipe quiet;
  if (SSL_connect(ssl.get()) != 1) {
    h.verify_result = SSL_get_verify_result(ssl.get());
    h.error = OpenSslError();
    return h;
  }
  h.completed = true;
  // TLS 1.3 finishes the client's handshake before the hub has checked the
  // client's certificate: a hub that refuses it closes the connection then
  // (gRPC sends no alert), while one that accepts sends HTTP/2's SETTINGS.
  char byte;
  if (const int n = SSL_read(ssl.get(), &byte, 1); n <= 0) {
    const int e = SSL_get_error(ssl.get(), n);
    const bool timed_out = e == SSL_ERROR_WANT_READ ||
                           (e == SSL_ERROR_SYSCALL && (errno == EAGAIN || errno == EWOULDBLOCK));
    if (!timed_out) {
      h.closed_by_hub = true;
      h.error = OpenSslError();
    }
  }
  return h;
}

ProbeResult Classify(const Handshake& h, const ClientOptions& options) {
  const bool has_identity = !options.cert_path.empty();
  const std::string alert = h.alert >= 0 ? SSL_alert_desc_string_long(h.alert) : "";
  if (h.server_hello && h.verify_result != X509_V_OK)
    return {Cause::kTlsHandshakeFailed,
            std::string("the hub's certificate is not trusted by --tls-ca ") + options.ca_path +
                ": " + X509_verify_cert_error_string(h.verify_result),
            true};
  const bool refused = !h.completed || h.closed_by_hub;
  if (h.certificate_requested && refused) {
    if (!has_identity) return {Cause::kClientCertificateRequired, alert, true};
    return {Cause::kTlsHandshakeFailed,
            "the hub refused this worker's certificate (--tls-cert " + options.cert_path + ")" +
                (alert.empty() ? "" : ": " + alert),
            true};
  }
  // Refused before or after the handshake for no reason given: a hub
  // turning connections away for a while, a reset; retrying may help.
  if (refused)
    return {Cause::kTlsHandshakeFailed, alert.empty() ? h.error : "the hub sent " + alert, false};
  return {};
}

}  // namespace

const char* CauseName(ProbeResult::Cause cause) {
  switch (cause) {
    case Cause::kNone: return "";
    case Cause::kUnreachable: return "unreachable";
    case Cause::kConnectionRefused: return "connection_refused";
    case Cause::kTlsHandshakeFailed: return "tls_handshake_failed";
    case Cause::kClientCertificateRequired: return "client_certificate_required";
    case Cause::kHubSpeaksPlaintext: return "hub_speaks_plaintext";
    case Cause::kHubSpeaksTls: return "hub_speaks_tls";
  }
  return "";
}

std::string Explain(const ProbeResult& r) {
  switch (r.cause) {
    case Cause::kNone: return "the hub answers";
    case Cause::kUnreachable: return "no answer (" + r.detail + ")";
    case Cause::kConnectionRefused:
      return "connection refused (nothing listens there; a hub may still be starting)";
    case Cause::kTlsHandshakeFailed: return "TLS handshake failed: " + r.detail;
    case Cause::kClientCertificateRequired:
      return "hub requires a client certificate (mutual TLS): give this worker --tls-cert and "
             "--tls-key, signed by the CA the hub was given as --tls-client-ca";
    case Cause::kHubSpeaksPlaintext:
      return "hub speaks plaintext (it runs with --insecure): run this worker with --insecure "
             "too, or the hub without it";
    case Cause::kHubSpeaksTls:
      return "hub speaks TLS, and this worker runs with --insecure: drop --insecure (the worker "
             "then trusts the hub's certificate on first use, or give --tls-ca or "
             "--hub-fingerprint)";
  }
  return r.detail;
}

ProbeResult ProbeHub(const std::string& target, const ClientOptions& options,
                     std::chrono::milliseconds timeout) {
  std::string host, port;
  SplitTarget(target, host, port);
  auto open = [&](Connection& c) {
    Connect(host, port, timeout, c);
    return c.failure == Cause::kNone;
  };
  Connection first;
  if (!open(first)) return {first.failure, first.detail, false};
  if (options.insecure) {
    if (SpeaksPlaintextHttp2(first.fd)) return {};
    Connection again;
    if (!open(again)) return {again.failure, again.detail, false};
    if (TryTls(again.fd, host, options).server_hello) return {Cause::kHubSpeaksTls, "", true};
    return {};
  }
  const Handshake h = TryTls(first.fd, host, options);
  if (!h.server_hello) {
    Connection again;
    if (open(again) && SpeaksPlaintextHttp2(again.fd))
      return {Cause::kHubSpeaksPlaintext, "", true};
  }
  return Classify(h, options);
}

}  // namespace mt::tls
