#include "hub/http/mhd_daemon.h"

#include <microhttpd.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <stdexcept>

namespace mt::http {
namespace {

// Connections libmicrohttpd holds beyond the table's: those the table
// evicted (shut down) that it has not closed yet.
constexpr unsigned kEvictedSlack = 64;
// TLS 1.2 and 1.3 only, as the hub's gRPC.
constexpr const char* kTlsPriorities = "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2";

// A request context: the head seen, no body, the answer comes at the next call.
char kHeadSeen = 0;

uint64_t IdOf(MHD_Connection* connection) {
  const MHD_ConnectionInfo* info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return info ? static_cast<uint64_t>(reinterpret_cast<uintptr_t>(info->socket_context)) : 0;
}

std::string Header(MHD_Connection* connection, MHD_ValueKind kind, const char* name) {
  const char* value = MHD_lookup_connection_value(connection, kind, name);
  return value ? value : "";
}

DashboardRequest RequestOf(MHD_Connection* connection, const char* url, const char* method) {
  DashboardRequest r;
  r.method = method;
  r.path = url;
  r.authorization = Header(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
  r.query_token = Header(connection, MHD_GET_ARGUMENT_KIND, "token");
  const std::string length = Header(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
  r.has_body = (!length.empty() && length.find_first_not_of('0') != std::string::npos) ||
               MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
                                           MHD_HTTP_HEADER_TRANSFER_ENCODING) != nullptr;
  return r;
}

// libmicrohttpd's own words (a refused handshake, a head too large...):
// every hostile client makes some, so only at debug level.
void Log(void*, const char* format, va_list args) {
  if (!spdlog::should_log(spdlog::level::debug)) return;
  char line[512];
  std::vsnprintf(line, sizeof line, format, args);
  spdlog::debug("dashboard (libmicrohttpd): {}", line);
}

}  // namespace

struct MhdDaemon::Callbacks {
  static void Connection(void* cls, MHD_Connection* connection, void** socket_context,
                         MHD_ConnectionNotificationCode code) {
    auto* self = static_cast<MhdDaemon*>(cls);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
      const MHD_ConnectionInfo* info =
          MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
      const uint64_t id = info ? self->table_.Attach(info->connect_fd) : 0;
      *socket_context = reinterpret_cast<void*>(static_cast<uintptr_t>(id));
    } else {
      self->table_.Remove(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(*socket_context)));
    }
  }

  static void Completed(void* cls, MHD_Connection* connection, void**, MHD_RequestTerminationCode) {
    static_cast<MhdDaemon*>(cls)->table_.Answered(IdOf(connection), Clock::now());
  }

  // Called when a request head is complete, before any body is read, and
  // again once the body is (none for a GET). A request with a body is
  // answered on the first call (the token checked first,
  // dashboard_routes.h) and its body never read; one without, on the
  // second: libmicrohttpd closes a connection whose answer was queued
  // before the end of its request, where a kept-alive one should stay.
  static MHD_Result Access(void* cls, MHD_Connection* connection, const char* url,
                           const char* method, const char*, const char*, size_t* upload_data_size,
                           void** request_context) {
    auto* self = static_cast<MhdDaemon*>(cls);
    if (*request_context == self) {  // body bytes after the answer: dropped
      *upload_data_size = 0;
      return MHD_YES;
    }
    const DashboardRequest request = RequestOf(connection, url, method);
    if (*request_context == nullptr && !request.has_body) {
      *request_context = &kHeadSeen;
      return MHD_YES;
    }
    *request_context = self;
    self->table_.Answering(IdOf(connection));
    const Response answer = self->handler_(request);
    const std::string_view body = answer.body();
    MHD_Response* response = MHD_create_response_from_buffer(
        body.size(), const_cast<char*>(body.data()),
        answer.is_static() ? MHD_RESPMEM_PERSISTENT : MHD_RESPMEM_MUST_COPY);
    if (!response) return MHD_NO;  // out of memory: the connection is closed
    if (!answer.content_type().empty())
      MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE,
                              answer.content_type().c_str());
    MHD_add_response_header(response, "X-Content-Type-Options", "nosniff");
    for (const auto& [name, value] : answer.fields())
      MHD_add_response_header(response, name.c_str(), value.c_str());
    // What follows a head with a body is not a request: closed after the answer.
    if (request.has_body) MHD_add_response_header(response, MHD_HTTP_HEADER_CONNECTION, "close");
    const MHD_Result queued =
        MHD_queue_response(connection, static_cast<unsigned>(answer.status()), response);
    MHD_destroy_response(response);
    return queued;
  }
};

MhdDaemon::MhdDaemon(ConnectionTable& table, Handler handler, const std::string& cert_pem,
                     const std::string& key_pem, const ServerLimits& limits)
    : table_(table), handler_(std::move(handler)), cert_pem_(cert_pem), key_pem_(key_pem) {
  const bool tls = !cert_pem_.empty();
  const unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC |
                         MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ERROR_LOG | (tls ? MHD_USE_TLS : 0);
  const auto connections = static_cast<unsigned>(limits.max_connections) + kEvictedSlack;
  // Options after the TLS ones are skipped without TLS (MHD_OPTION_END there).
  daemon_ = MHD_start_daemon(
      flags, 0, nullptr, nullptr, &Callbacks::Access, this, MHD_OPTION_EXTERNAL_LOGGER, &Log,
      nullptr, MHD_OPTION_NOTIFY_CONNECTION, &Callbacks::Connection, this,
      MHD_OPTION_NOTIFY_COMPLETED, &Callbacks::Completed, this, MHD_OPTION_CONNECTION_LIMIT,
      connections, MHD_OPTION_CONNECTION_MEMORY_LIMIT, kConnectionMemoryBytes,
      MHD_OPTION_CONNECTION_TIMEOUT, limits.write_seconds,
      tls ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, key_pem_.c_str(), MHD_OPTION_HTTPS_MEM_CERT,
      cert_pem_.c_str(), MHD_OPTION_HTTPS_PRIORITIES, kTlsPriorities, MHD_OPTION_END);
  if (!daemon_) {
    if (tls)
      throw std::invalid_argument(
          "the dashboard cannot use the hub's certificate and key (GnuTLS refused them)");
    throw std::runtime_error("the dashboard's HTTP server (libmicrohttpd) did not start");
  }
}

MhdDaemon::~MhdDaemon() { MHD_stop_daemon(daemon_); }

bool MhdDaemon::Add(int fd) {
  sockaddr_storage peer{};
  socklen_t size = sizeof peer;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &size) != 0) {
    close(fd);
    return false;
  }
  return MHD_add_connection(daemon_, fd, reinterpret_cast<sockaddr*>(&peer), size) == MHD_YES;
}

}  // namespace mt::http
