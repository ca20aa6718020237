#include "hub/http/dashboard_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "hub/http/assets.h"
#include "hub/monitor/access_token.h"
#include "hub/monitor/prometheus_text.h"
#include "hub/monitor/status_json.h"

namespace mt {
namespace {

// Few readers (a browser or two, a Prometheus): a few threads serve them.
constexpr size_t kThreads = 4;
// An idle keep-alive connection holds a thread, and shutdown, this long.
constexpr time_t kKeepAliveSeconds = 1;

void Text(httplib::Response& res, int status, const std::string& body) {
  res.status = status;
  res.set_content(body, "text/plain; charset=utf-8");
}

// Before any route: the token, when the hub has one, and GET only (the
// endpoint is read-only). False when it answered the request itself.
bool Gate(const std::string& token, const httplib::Request& req, httplib::Response& res) {
  if (!RequestAuthorized(token, req.get_header_value("Authorization"),
                         req.get_param_value("token"))) {
    res.set_header("WWW-Authenticate", "Bearer realm=\"mthub\"");
    Text(res, 401,
         "this hub needs its token: send Authorization: Bearer TOKEN, or add ?token=TOKEN to the "
         "address\n");
    return false;
  }
  if (req.method != "GET" && req.method != "HEAD") {
    res.set_header("Allow", "GET, HEAD");
    Text(res, 405, "read-only: GET only\n");
    return false;
  }
  return true;
}

}  // namespace

struct DashboardServer::Impl {
  httplib::Server server;
  std::thread listener;
  std::atomic<bool> listen_returned{false};
};

DashboardServer::DashboardServer(const std::string& bind, int port, std::string token,
                                 SnapshotFn snapshot)
    : impl_(std::make_unique<Impl>()) {
  httplib::Server& s = impl_->server;
  s.new_task_queue = [] { return new httplib::ThreadPool(kThreads); };
  // cpp-httplib's default socket options set SO_REUSEPORT, with which a
  // second hub would share a taken port instead of being told it is taken.
  s.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  s.set_keep_alive_timeout(kKeepAliveSeconds);
  s.set_pre_routing_handler(
      [token = std::move(token)](const httplib::Request& req, httplib::Response& res) {
        return Gate(token, req, res) ? httplib::Server::HandlerResponse::Unhandled
                                     : httplib::Server::HandlerResponse::Handled;
      });
  s.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unknown error";
        try {
          std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        Text(res, 500, what + "\n");
      });
  s.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "no-cache");
    res.set_content(std::string(http_assets::kDashboardPage), "text/html; charset=utf-8");
  });
  s.Get("/chart.js", [](const httplib::Request&, httplib::Response& res) {
    // It changes only with the binary.
    res.set_header("Cache-Control", "public, max-age=31536000, immutable");
    res.set_content(std::string(http_assets::kChartJs), "text/javascript; charset=utf-8");
  });
  s.Get("/metrics", [snapshot](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    res.set_content(PrometheusText(snapshot()), "text/plain; version=0.0.4; charset=utf-8");
  });
  s.Get("/api/status", [snapshot](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    res.set_content(StatusJson(snapshot()).dump(), "application/json");
  });

  if (!s.bind_to_port(bind, port))
    throw DashboardBindError("cannot listen on " + bind + ":" + std::to_string(port) +
                             " for the dashboard (is the port taken?)");
  port_ = port;
  impl_->listener = std::thread([impl = impl_.get()] {
    impl->server.listen_after_bind();
    impl->listen_returned = true;
  });
}

DashboardServer::~DashboardServer() {
  // stop() does nothing before the listener has started listening, so wait
  // for that first (it starts at once; bounded all the same).
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!impl_->server.is_running() && !impl_->listen_returned &&
         std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (!impl_->listen_returned) impl_->server.stop();
  if (impl_->listener.joinable()) impl_->listener.join();
}

}  // namespace mt
