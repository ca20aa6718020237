// What secure aggregation (core/secagg/) costs per round beyond the masked
// update itself: each worker's time to make its bundle, begin the round,
// mask a LeNet-5-sized update and reveal its shares, the hub's time to sum
// and unmask with no dropout and with one, and the bytes of the extra
// messages (a bundle up, an unmasking request down, a reveal up).
//   secagg_bench [params=61706] [repeats=20]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "core/secagg/secagg_client.h"
#include "core/secagg/secagg_server.h"

namespace {

using namespace mt::secagg;  // NOLINT: a bench of this namespace
using Clock = std::chrono::steady_clock;

double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

struct Times {
  double bundle = 0, begin = 0, mask = 0, reveal = 0, hub = 0;
  size_t bundle_bytes = 0, request_bytes = 0, reveal_bytes = 0;
};

size_t BoxBytes(const std::vector<SealedShare>& boxes) {
  size_t n = 0;
  for (const SealedShare& b : boxes) n += b.box.size() + 16;  // ids, kind, seq
  return n;
}

// One round of n workers over `params` values; `drop` of them never send.
Times Round(int n, size_t params, int drop, uint64_t round) {
  const int t = DefaultThreshold(n);
  std::vector<std::unique_ptr<SecAggClient>> clients;
  std::vector<Holder> holders;
  for (int i = 0; i < n; ++i) {
    clients.push_back(std::make_unique<SecAggClient>(i, 1, t));
    holders.push_back({i, clients.back()->box_public()});
  }
  Times out;
  std::vector<Bundle> bundles;
  std::vector<Member> roster;
  for (auto& c : clients) {
    const auto a = Clock::now();
    bundles.push_back(c->PrepareBundle(holders));
    out.bundle += Ms(a, Clock::now());
    roster.push_back({c->id(), c->box_public(), bundles.back().mask_public});
  }
  out.bundle_bytes = 32 + BoxBytes(bundles[0].boxes);
  SecAggServer server(1, params, t);
  server.BeginRound(round, roster);
  for (int i = 0; i < n; ++i) server.AddBoxes(i, bundles[static_cast<size_t>(i)].boxes);
  std::vector<float> update(params, 0.01F);
  std::vector<uint32_t> y(params);
  double hub = 0;
  for (int i = 0; i < n; ++i) {
    auto a = Clock::now();
    clients[static_cast<size_t>(i)]->BeginRound(round, roster);
    out.begin += Ms(a, Clock::now());
    if (i < drop) continue;
    a = Clock::now();
    clients[static_cast<size_t>(i)]->Mask(0, update.data(), params, 1.0 / n, y.data());
    out.mask += Ms(a, Clock::now());
    a = Clock::now();
    server.AddMasked(i, 0, y.data(), params);
    server.Submitted(i, 1.0 / n);
    hub += Ms(a, Clock::now());
  }
  auto a = Clock::now();
  const UnmaskRequest request = server.CloseRound();
  hub += Ms(a, Clock::now());
  for (const auto& [id, boxes] : request.boxes_for) {
    out.request_bytes = std::max(out.request_bytes, BoxBytes(boxes) + 4 * static_cast<size_t>(n));
    a = Clock::now();
    const auto shares =
        clients[static_cast<size_t>(id)]->Reveal(request.survivors, request.dropped, boxes);
    out.reveal += Ms(a, Clock::now());
    size_t bytes = 0;
    for (const RevealedShare& s : shares) bytes += s.share.size() + 8;
    out.reveal_bytes = std::max(out.reveal_bytes, bytes);
    a = Clock::now();
    server.AddRevealed(id, shares);
    hub += Ms(a, Clock::now());
  }
  std::vector<float> average(params);
  a = Clock::now();
  server.Finish(average.data());
  out.hub = hub + Ms(a, Clock::now());
  const int survivors = n - drop;
  out.bundle /= n;
  out.begin /= n;
  out.mask /= survivors;
  out.reveal /= survivors;
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t params = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 61706;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 20;
  std::printf("%zu parameters, best of %d rounds; ms per worker, and the hub's\n", params, repeats);
  std::printf("%8s %5s %8s %8s %8s %8s %8s %9s %9s %9s\n", "workers", "drop", "bundle", "begin",
              "mask", "reveal", "hub", "bundle_B", "request_B", "reveal_B");
  for (int n : {3, 5, 10}) {
    for (int drop : {0, 1}) {
      Times best;
      best.bundle = best.begin = best.mask = best.reveal = best.hub = 1e30;
      for (int r = 0; r < repeats; ++r) {
        const Times t = Round(n, params, drop, static_cast<uint64_t>(r + 1));
        best.bundle = std::min(best.bundle, t.bundle);
        best.begin = std::min(best.begin, t.begin);
        best.mask = std::min(best.mask, t.mask);
        best.reveal = std::min(best.reveal, t.reveal);
        best.hub = std::min(best.hub, t.hub);
        best.bundle_bytes = t.bundle_bytes;
        best.request_bytes = t.request_bytes;
        best.reveal_bytes = t.reveal_bytes;
      }
      std::printf("%8d %5d %8.3f %8.3f %8.3f %8.3f %8.3f %9zu %9zu %9zu\n", n, drop, best.bundle,
                  best.begin, best.mask, best.reveal, best.hub, best.bundle_bytes,
                  best.request_bytes, best.reveal_bytes);
    }
  }
  return 0;
}
