// Per-address limits on joining, over time: a token bucket of Joins per
// host, and a host that keeps presenting a wrong token is turned away for a
// while (a guessing peer gets a few tries a minute, not thousands a
// second). Honest workers join once per session and never fail the token
// (a worker that does stops), so neither limit touches them; a whole local
// cluster of simulated workers on one host fits the bucket's burst. The
// table of hosts is bounded: the longest idle entry makes room. Not
// thread-safe: Membership calls it under the coordinator's lock.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <unordered_map>

namespace mt {

class PeerLimits {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr double kJoinBurst = 256;     // Joins one host may make at once
  static constexpr double kJoinsPerSecond = 4;  // and then, on average
  static constexpr int kMaxRefusals = 10;       // wrong tokens within kRefusalWindow ...
  static constexpr std::chrono::seconds kRefusalWindow{60};
  static constexpr std::chrono::seconds kBlock{60};  // ... turn the host away this long
  static constexpr size_t kMaxHosts = 4096;

  // Why `host` may not join now ("" if it may); a Join allowed takes a
  // token from its bucket.
  std::string AdmitJoin(const std::string& host, Clock::time_point now);
  // A wrong token (or session secret) from `host`.
  void NoteRefusal(const std::string& host, Clock::time_point now);
  size_t hosts() const { return hosts_.size(); }

 private:
  struct Host {
    double tokens = kJoinBurst;
    Clock::time_point refilled;
    int refusals = 0;
    Clock::time_point window_start;
    Clock::time_point blocked_until;
    Clock::time_point last_seen;
  };
  Host& Entry(const std::string& host, Clock::time_point now);

  std::unordered_map<std::string, Host> hosts_;
};

}  // namespace mt
