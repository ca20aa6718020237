// N simulated workers in one process against a real mthub, for the load
// bench (tests/bench/hub_load.py). Each joins over its own gRPC connection,
// as a device would, and answers every assignment at once with a fixed
// small gradient: no model, no data, no compute, so what the hub spends per
// step is the hub's own cost (averaging, optimizer, the broadcast, the
// transport) and not a worker's. One thread per worker, because the sync
// client is the simplest correct one and 256 blocked threads cost nothing.
#include <grpcpp/grpcpp.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "hub.grpc.pb.h"
#include "proto/wire.h"
#include "tls/channel_credentials.h"
#include "worker/hub_connection.h"

namespace mt {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string hub = "127.0.0.1:50051";
  int workers = 16;
  bool insecure = false;
  std::string known_hubs;  // TLS, trust on first use: a file of our own
  std::string token;
  double join_timeout_s = 300;
};

struct Totals {
  std::atomic<int64_t> steps{0}, left_out{0}, states{0}, stopped{0}, failed{0};
};

// The same small direction for every worker, scaled a little per worker:
// all agree (robust aggregation keeps everyone), none is identical (no
// zero distances), and at 1e-4 the weights barely move, so the run's final
// model stays sane whatever the learning rate.
float BaseGradient(size_t j) { return 1e-4f * std::cos(0.37f * static_cast<float>(j)); }

std::shared_ptr<grpc::Channel> MakeChannel(const Options& o, const tls::ChannelSecurity& security,
                                           int index) {
  grpc::ChannelArguments args = HubChannelArguments();
  // Without these, gRPC would share one TCP connection among all channels
  // to the same address; real workers each have their own.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt("mt.sim_worker", index);
  return grpc::CreateCustomChannel(o.hub, security.credentials, args);
}

// Joins, retrying while the hub is busy with other joins (it admits 8
// pending joins per address, and all of ours share 127.0.0.1).
bool JoinHub(proto::Hub::Stub& stub, const Options& o, int index, proto::JoinReply* reply) {
  proto::JoinRequest join;
  join.set_protocol_version(wire::kProtocolVersion);
  join.set_token(o.token);
  join.mutable_device()->set_name("sim-" + std::to_string(index));
  join.mutable_device()->set_cores(1);
  join.mutable_device()->set_threads(1);
  join.mutable_device()->set_device(proto::DEVICE_CPU);
  const auto give_up = Clock::now() + std::chrono::duration<double>(o.join_timeout_s);
  while (Clock::now() < give_up) {
    grpc::ClientContext ctx;
    ctx.set_wait_for_ready(true);
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    const grpc::Status s = stub.Join(&ctx, join, reply);
    if (s.ok()) return true;
    if (s.error_code() != grpc::StatusCode::UNAVAILABLE &&
        s.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED) {
      std::fprintf(stderr, "sim-%d: join refused: %s\n", index, s.error_message().c_str());
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50 + index % 50));
  }
  std::fprintf(stderr, "sim-%d: no join within %.0f s\n", index, o.join_timeout_s);
  return false;
}

// Sends this worker's gradient for assignment `a`, one chunk per segment
// in the order the hub gave them (last layer first).
bool SendGradient(grpc::ClientReaderWriter<proto::WorkerMessage, proto::HubMessage>& stream,
                  const std::vector<wire::Segment>& segments, const std::vector<float>& base,
                  float scale, const proto::Assignment& a, proto::WorkerMessage& out) {
  for (size_t k = 0; k < segments.size(); ++k) {
    const wire::Segment& seg = segments[k];
    proto::GradientChunk* g = out.mutable_gradient();
    g->Clear();
    g->set_step(a.step());
    g->set_offset(seg.begin);
    auto* values = g->mutable_values();
    values->Reserve(static_cast<int>(seg.size()));
    for (size_t j = seg.begin; j < seg.end; ++j) values->AddAlreadyReserved(scale * base[j]);
    const bool last = k + 1 == segments.size();
    g->set_last(last);
    if (last) {
      g->set_batch(a.batch());
      g->set_loss_sum(2.3 * a.batch());  // about a uniform guess's loss
      g->set_compute_ms(1.0);
    }
    if (!stream.Write(out)) return false;
  }
  return true;
}

void RunWorker(const Options& o, const tls::ChannelSecurity& security, int index,
               const std::vector<float>& base, Totals& totals) {
  auto stub = proto::Hub::NewStub(MakeChannel(o, security, index));
  proto::JoinReply reply;
  if (!JoinHub(*stub, o, index, &reply)) {
    ++totals.failed;
    return;
  }
  if (reply.compression() != proto::COMPRESSION_NONE || reply.param_count() > base.size()) {
    std::fprintf(stderr, "sim-%d: only uncompressed gradients of known size are simulated\n",
                 index);
    ++totals.failed;
    return;
  }
  const std::vector<uint64_t> begins(reply.segments().begin(), reply.segments().end());
  const std::vector<wire::Segment> segments =
      wire::SegmentsFromBegins(begins, static_cast<size_t>(reply.param_count()));
  grpc::ClientContext ctx;
  auto stream = stub->Train(&ctx);
  proto::WorkerMessage out;
  proto::Hello* hello = out.mutable_hello();
  hello->set_worker_id(reply.worker_id());
  hello->set_token(o.token);
  hello->set_session_secret(reply.session_secret());
  stream->Write(out);
  const float scale = 1.0f + 0.01f * static_cast<float>(index % 16);
  proto::HubMessage m;
  bool ok = true;
  while (ok && stream->Read(&m)) {
    if (m.has_stop()) {
      ++totals.stopped;
      break;
    }
    if (m.has_left_out()) ++totals.left_out;
    if (m.has_state() && m.state().last()) ++totals.states;
    const proto::StepPlan* plan = m.has_plan()                          ? &m.plan()
                                  : m.has_result() && m.result().last() ? &m.result().plan()
                                                                        : nullptr;
    if (!plan) continue;
    for (const proto::Assignment& a : plan->assignments()) {
      if (a.worker_id() != reply.worker_id()) continue;
      ok = SendGradient(*stream, segments, base, scale, a, out);
      ++totals.steps;
    }
  }
  stream->WritesDone();
  stream->Finish();
}

}  // namespace
}  // namespace mt

int main(int argc, char** argv) {
  mt::Options o;
  CLI::App app(
      "Simulated workers for the hub load bench: each joins and answers every "
      "assignment with a fixed gradient, computing nothing.");
  app.add_option("--hub", o.hub, "HOST:PORT");
  app.add_option("--workers", o.workers, "how many workers to simulate")
      ->check(CLI::Range(1, 4096));
  app.add_flag("--insecure", o.insecure, "plaintext (the hub must run with --insecure too)");
  app.add_option("--known-hubs", o.known_hubs, "TLS: trust-on-first-use file (use a fresh one)");
  app.add_option("--token", o.token, "the hub's token, if it has one");
  app.add_option("--join-timeout", o.join_timeout_s, "seconds each worker keeps trying to join");
  CLI11_PARSE(app, argc, argv);
  if (!o.insecure && o.known_hubs.empty()) {
    std::fprintf(stderr, "give --insecure or --known-hubs FILE\n");
    return 2;
  }
  mt::tls::ClientOptions tls;
  tls.insecure = o.insecure;
  tls.known_hubs_path = o.known_hubs;
  // One set of credentials for all: the first handshake remembers the
  // hub's fingerprint and the rest are checked against it.
  const mt::tls::ChannelSecurity security = mt::tls::MakeChannelSecurity(tls, o.hub);
  // Large enough for any preset; a bigger model is refused per worker.
  std::vector<float> base(std::size_t{4} << 20);
  for (size_t j = 0; j < base.size(); ++j) base[j] = mt::BaseGradient(j);
  mt::Totals totals;
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(o.workers));
  for (int i = 0; i < o.workers; ++i)
    threads.emplace_back(mt::RunWorker, std::cref(o), std::cref(security), i, std::cref(base),
                         std::ref(totals));
  for (auto& t : threads) t.join();
  std::printf(
      "{\"workers\": %d, \"gradients_sent\": %lld, \"left_out\": %lld, \"states\": %lld, "
      "\"stopped\": %lld, \"failed\": %lld}\n",
      o.workers, static_cast<long long>(totals.steps.load()),
      static_cast<long long>(totals.left_out.load()), static_cast<long long>(totals.states.load()),
      static_cast<long long>(totals.stopped.load()), static_cast<long long>(totals.failed.load()));
  return totals.failed.load() > 0 ? 1 : 0;
}
