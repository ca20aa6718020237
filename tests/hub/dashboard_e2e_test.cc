// mthub --http-port with real workers: /metrics parses and its step
// counter rises between two scrapes, /api/status agrees with it, every
// endpoint wants the hub's token, and headless Chromium renders the
// dashboard's charts and the values /api/status reports, all over HTTPS
// with the hub's certificate (the default). Each run is
// ended by SIGTERM once seen, so it lasts only as long as the checks.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "tests/support/chromium.h"
#include "tests/support/cluster_processes.h"
#include "tests/support/files.h"
#include "tests/support/http_client.h"
#include "tests/support/idx_writer.h"
#include "tests/support/prometheus_parser.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::ChildProcess;
using test_support::HttpReply;

// The hub serves its dashboard over HTTPS with its own certificate.
HttpReply HttpGet(int port, const std::string& path, const std::string& bearer = "") {
  return test_support::HttpGet(port, path, bearer, test_support::Scheme::kHttps);
}

constexpr const char* kToken = "dashboard-e2e-token";

// A hub with its dashboard on a free port, behind a token, and two slowed
// workers on a small dataset with more steps than the test waits for.
struct Cluster {
  fs::path dir;
  int http_port = 0;
  std::unique_ptr<ChildProcess> hub;
  std::vector<std::unique_ptr<ChildProcess>> workers;

  explicit Cluster(const std::string& name, std::vector<std::string> extra = {})
      : dir(test_support::FreshTempDir(name)) {
    test_support::WriteIdxDataset(dir.string(), 512, 100, 3);
    const fs::path token_file = dir / "token";
    std::ofstream(token_file) << kToken << "\n";
    http_port = test_support::FreeTcpPort();
    std::vector<std::string> args = {"--workers",         "2",           "--dataset",
                                     dir.string(),        "--steps",     "20000",
                                     "--eval-every",      "10",          "--token-file",
                                     token_file.string(), "--http-port", std::to_string(http_port)};
    args.insert(args.end(), extra.begin(), extra.end());
    const int port = test_support::StartHub(hub, dir, args);
    if (port == 0) return;
    // Slowed: the steps still come every few milliseconds, and the CPU is
    // left for the hub's HTTP thread and the browser.
    for (const char* w : {"alpha", "beta"})
      workers.push_back(test_support::StartWorker(
          dir, w, port, {"--token-file", token_file.string(), "--slowdown", "4"}));
  }
  // Ends the run (the hub says goodbye to its workers) and checks it ended well.
  void Stop() {
    hub->Signal(SIGTERM);
    EXPECT_EQ(hub->Wait(60), 0) << hub->Log();
    for (auto& w : workers) EXPECT_EQ(w->Wait(60), 0) << w->Log();
    if (!::testing::Test::HasFailure()) fs::remove_all(dir);  // else kept, logs and all
  }
};

int64_t StepsTotal(const test_support::Exposition& e) {
  const auto samples = test_support::FindSamples(e, "mt_hub_steps_total");
  EXPECT_EQ(samples.size(), 1u);
  return samples.empty() ? -1 : static_cast<int64_t>(samples[0].value);
}

// /api/status, once it reports a step done.
json AwaitTraining(int port) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (std::chrono::steady_clock::now() < deadline) {
    const HttpReply r = HttpGet(port, "/api/status", kToken);
    if (r.status == 200) {
      const json status = json::parse(r.body);
      if (status.value("step", 0) > 0) return status;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ADD_FAILURE() << "the hub reported no step in 90 s";
  return json();
}

TEST(Dashboard, MetricsStepCounterRisesBetweenScrapesAndStatusAgrees) {
  Cluster c("dashboard-metrics");
  ASSERT_GT(c.http_port, 0);
  ASSERT_EQ(c.workers.size(), 2u);
  ASSERT_FALSE(AwaitTraining(c.http_port).is_null()) << c.hub->Log();

  const HttpReply first = HttpGet(c.http_port, "/metrics", kToken);
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_NE(first.content_type.find("text/plain"), std::string::npos) << first.content_type;
  const int64_t steps_before = StepsTotal(test_support::ParsePrometheus(first.body));
  ASSERT_GT(steps_before, 0) << first.body;
  const HttpReply status_reply = HttpGet(c.http_port, "/api/status", kToken);
  ASSERT_EQ(status_reply.status, 200);
  const json status = json::parse(status_reply.body);

  // The counter rises while the run goes on (bounded: the steps come every
  // few milliseconds).
  int64_t steps_after = steps_before;
  test_support::Exposition second;
  for (int i = 0; i < 100 && steps_after <= steps_before; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const HttpReply r = HttpGet(c.http_port, "/metrics", kToken);
    ASSERT_EQ(r.status, 200);
    second = test_support::ParsePrometheus(r.body);
    steps_after = StepsTotal(second);
  }
  EXPECT_GT(steps_after, steps_before);
  // Between the two scrapes, /api/status saw a step in between.
  EXPECT_GE(status.value("step", int64_t{-1}), steps_before);
  EXPECT_LE(status.value("step", int64_t{-1}), steps_after);
  EXPECT_EQ(status["run"].value("workers_expected", 0), 2);
  EXPECT_EQ(status.value("workers_total", 0), 2) << status.dump(1);
  // Both workers have series of their own.
  int worker_series = 0;
  for (const auto& s : test_support::FindSamples(second, "mt_hub_worker_steps_total"))
    worker_series += s.labels.at("worker") == "alpha" || s.labels.at("worker") == "beta";
  EXPECT_EQ(worker_series, 2);

  // Without the token every endpoint says 401; with it, the page and
  // Chart.js come from the hub itself.
  for (const char* path : {"/", "/chart.js", "/metrics", "/api/status", "/elsewhere"}) {
    EXPECT_EQ(HttpGet(c.http_port, path).status, 401) << path;
    EXPECT_EQ(HttpGet(c.http_port, path, "not-" + std::string(kToken)).status, 401) << path;
  }
  const HttpReply page = HttpGet(c.http_port, std::string("/?token=") + kToken);
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.body.find("id=\"loss-chart\""), std::string::npos);
  const HttpReply chart_js = HttpGet(c.http_port, "/chart.js", kToken);
  EXPECT_EQ(chart_js.status, 200);
  EXPECT_NE(chart_js.content_type.find("javascript"), std::string::npos);
  EXPECT_GT(chart_js.body.size(), 100000u);
  EXPECT_EQ(HttpGet(c.http_port, "/elsewhere", kToken).status, 404);
  // Read-only.
  httplib::SSLClient client("127.0.0.1", c.http_port);
  client.enable_server_certificate_verification(false);
  const httplib::Result post =
      client.Post("/api/status", {{"Authorization", std::string("Bearer ") + kToken}}, "{}",
                  "application/json");
  EXPECT_EQ(post ? post->status : 0, 405);
  c.Stop();
}

// The value of `attribute` on the element with id `id` in a dumped DOM.
std::string Attribute(const std::string& dom, const std::string& id, const std::string& attribute) {
  std::smatch m;
  const std::regex re("<[a-z]+ [^>]*id=\"" + id + "\"[^>]*" + attribute + "=\"([^\"]*)\"");
  return std::regex_search(dom, m, re) ? m[1].str() : "";
}

TEST(Dashboard, HeadlessChromiumDrawsTheChartsAndWhatTheStatusReports) {
  if (!test_support::HaveChromium())
    GTEST_SKIP() << "no " << test_support::kChromium << " (deploy/install-deps.sh installs it)";
  // Each worker its own classes: the page draws the shares too.
  Cluster c("dashboard-browser", {"--partition", "classes:5", "--aggregate", "mean"});
  ASSERT_GT(c.http_port, 0);
  ASSERT_EQ(c.workers.size(), 2u);
  ASSERT_FALSE(AwaitTraining(c.http_port).is_null()) << c.hub->Log();

  // The token in the address, as a user opens it; the page passes it on.
  const std::string dom = test_support::DumpDom("https://127.0.0.1:" + std::to_string(c.http_port) +
                                                    "/?token=" + kToken,
                                                c.dir / "chromium", 1500);
  const json status = json::parse(HttpGet(c.http_port, "/api/status", kToken).body);
  c.Stop();
  ASSERT_FALSE(dom.empty()) << "chromium printed no DOM";

  // Chart.js drew the loss over the steps it had.
  const std::string points = Attribute(dom, "loss-chart", "data-points");
  ASSERT_FALSE(points.empty()) << dom;
  EXPECT_GT(std::stoi(points), 0);
  EXPECT_NE(dom.find("<canvas id=\"accuracy-chart\""), std::string::npos);
  // The step it shows is one the hub had done by then.
  const std::string step = Attribute(dom, "step", "data-step");
  ASSERT_FALSE(step.empty()) << dom;
  EXPECT_GT(std::stoll(step), 0);
  EXPECT_LE(std::stoll(step), status.value("step", int64_t{0}));
  // The model and each worker as /api/status names them.
  const std::string model = status["run"].value("model", "?");
  EXPECT_NE(dom.find("<span id=\"model\">" + model + "</span>"), std::string::npos) << dom;
  for (const auto& w : status["workers"])
    EXPECT_NE(dom.find("data-worker=\"" + w.value("name", "?") + "\""), std::string::npos)
        << w.dump();
  // Two shares of five classes each, as /api/status has them, drawn.
  EXPECT_EQ(status["run"].value("partition", ""), "classes:5");
  ASSERT_EQ(status["run"]["partition_histograms"].size(), 2u);
  EXPECT_EQ(Attribute(dom, "partition-chart", "data-shares"), "2") << dom;
}

TEST(Dashboard, APortNamedWithHttpPortThatIsTakenIsARuntimeError) {
  const fs::path dir = test_support::FreshTempDir("dashboard-port-taken");
  test_support::WriteIdxDataset(dir.string(), 64, 16, 3);
  // Something listens on the port already.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int taken = ntohs(addr.sin_port);
  const test_support::ProcessResult r = test_support::RunProcess(
      {test_support::BinaryPath("hub/mthub"), "--bind", "127.0.0.1", "--port", "0", "--dataset",
       dir.string(), "--steps", "1", "--http-port", std::to_string(taken)},
      60);
  close(fd);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("127.0.0.1:" + std::to_string(taken)), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--http-port"), std::string::npos) << r.output;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mt
