#include "hub/membership/membership.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <random>

#include "core/util/constant_time.h"
#include "core/util/rate_limited_log.h"
#include "hub/membership/churn_log.h"
#include "hub/membership/network_strings.h"
#include "hub/membership/placement_summary.h"
#include "proto/wire.h"

namespace mt {

using Code = HubStatus::Code;

namespace {

constexpr const char* kBadToken = "wrong or missing token";
// The same answer for an id nobody holds and for a wrong secret, so that
// a stranger learns nothing of which ids exist.
constexpr const char* kBadSession =
    "unknown worker id or wrong session secret: only the worker that joined may speak for its "
    "id (Join first)";

// The address of a gRPC peer ("ipv4:10.0.0.5:43122" -> "ipv4:10.0.0.5",
// "ipv6:[::1]:5000" -> "ipv6:[::1]"), without the port a peer can change.
std::string PeerHost(const std::string& peer) {
  const size_t colon = peer.rfind(':');
  const size_t scheme = peer.find(':');
  return colon != std::string::npos && colon != scheme ? peer.substr(0, colon) : peer;
}

// Refused Joins are a peer's to cause at will: logged at most once per 10 s.
void LogRefusal(const std::string& peer, const std::string& why) {
  static RateLimitedLog log;
  int64_t left_out = 0;
  if (log.ShouldLog(&left_out))
    spdlog::warn("refused a Join from {}: {} ({} more refused since the last such line)", peer, why,
                 left_out);
}

// 128 bits from the operating system's generator.
std::string NewSessionSecret() {
  std::random_device rd;
  std::string secret(16, '\0');
  for (size_t i = 0; i < secret.size(); i += 4) {
    const uint32_t r = rd();
    for (size_t k = 0; k < 4; ++k) secret[i + k] = static_cast<char>((r >> (8 * k)) & 0xFF);
  }
  return secret;
}

}  // namespace

const char* StateName(WorkerSlot::State s) {
  switch (s) {
    case WorkerSlot::State::kJoined: return "joined";
    case WorkerSlot::State::kWaiting: return "waiting";
    case WorkerSlot::State::kActive: return "active";
    case WorkerSlot::State::kLate: return "late";
    case WorkerSlot::State::kGone: return "gone";
  }
  return "?";
}

HubStatus Membership::BatchCap(int64_t budget, int* max_batch) const {
  *max_batch = static_cast<int>(rules_.global_batch);
  if (budget <= 0) return HubStatus::Ok();
  const int64_t fits = (budget - static_cast<int64_t>(rules_.fixed_bytes)) /
                       static_cast<int64_t>(std::max<size_t>(rules_.bytes_per_sample, 1));
  if (fits < 1)
    return HubStatus::Error(Code::kResourceExhausted,
                            "memory budget of " + std::to_string(budget >> 10) +
                                " KiB holds no batch: the model needs " +
                                std::to_string(rules_.fixed_bytes >> 10) + " KiB plus " +
                                std::to_string(rules_.bytes_per_sample >> 10) + " KiB per sample");
  *max_batch = static_cast<int>(std::min<int64_t>(fits, rules_.global_batch));
  return HubStatus::Ok();
}

HubStatus Membership::Admit(const proto::JoinRequest& req, const std::string& peer,
                            WorkerSlot** out, const std::string& identity) {
  // Limits per address first: they say nothing about the run.
  const std::string host = PeerHost(peer);
  const auto now = std::chrono::steady_clock::now();
  if (std::string why = limits_.AdmitJoin(host, now); !why.empty()) {
    LogRefusal(peer, why);
    return HubStatus::Error(Code::kUnavailable, why);
  }
  // The token before anything else: without it nothing about the run is told.
  if (!TokenMatches(req.token())) {
    limits_.NoteRefusal(host, now);
    LogRefusal(peer, kBadToken);
    return HubStatus::Error(Code::kUnauthenticated, kBadToken);
  }
  if (req.protocol_version() != wire::kProtocolVersion)
    return HubStatus::Error(Code::kFailedPrecondition, "protocol version " +
                                                           std::to_string(req.protocol_version()) +
                                                           " is not supported (hub speaks " +
                                                           std::to_string(wire::kProtocolVersion) +
                                                           "); upgrade the older side");
  // OUT_OF_RANGE, not UNAVAILABLE: a worker should stop, not retry.
  if (closed_) return HubStatus::Error(Code::kOutOfRange, "the run has ended");
  // Not counted against the address: the certificate, not the address, is
  // what is refused, and its holder is told so (the worker stops).
  if (const std::string* why = bans_.Why(identity)) {
    const std::string refusal = "this client certificate (" + identity +
                                ") was dropped earlier in this run for a hostile contribution (" +
                                *why + "); it may not join again until the run ends";
    LogRefusal(peer, refusal);
    return HubStatus::Error(Code::kPermissionDenied, refusal);
  }
  int pending = 0, from_host = 0, in = 0;
  for (const auto& [slot_id, s] : slots_) {
    const bool waits = s->state == WorkerSlot::State::kJoined;
    pending += waits;
    from_host += waits && PeerHost(s->peer) == host;
    in += s->state != WorkerSlot::State::kGone;
  }
  const bool host_full = from_host >= kMaxPendingJoinsPerHost;
  if (host_full || pending >= kMaxPendingJoins)
    return HubStatus::Error(Code::kUnavailable,
                            host_full
                                ? std::to_string(from_host) + " joins from " + host +
                                      " are waiting for their stream; try again shortly"
                                : std::to_string(pending) +
                                      " joins are waiting for their stream; try again shortly");
  if (rules_.max_workers > 0 && in >= rules_.max_workers)
    return HubStatus::Error(Code::kResourceExhausted, "the run has its " +
                                                          std::to_string(rules_.max_workers) +
                                                          " workers (mthub --max-workers)");
  int max_batch = 0;
  if (HubStatus s = BatchCap(req.device().memory_budget_bytes(), &max_batch); !s.ok()) return s;
  const int id = next_id_++;
  auto slot =
      std::make_unique<WorkerSlot>(id, rules_.segments, rules_.param_count, rules_.matrices);
  slot->info = req.device();
  slot->name = req.device().name().empty() ? "worker" + std::to_string(id) : req.device().name();
  slot->device = wire::DeviceName(req.device().device());
  slot->peer = peer;
  slot->max_batch = max_batch;
  slot->session.secret = NewSessionSecret();
  slot->session.joined_at = std::chrono::steady_clock::now();
  slot->session.identity = identity;
  slot->session.lineage = lineages_.Of(identity, host);
  LogChurn(
      spdlog::level::info,
      fmt::format("worker {} joined: {} ({}, {} cores, {} threads{}) from {}", id, slot->name,
                  slot->device, req.device().cores(), req.device().threads(),
                  max_batch < rules_.global_batch
                      ? ", batch at most " + std::to_string(max_batch) + " by its memory budget"
                      : "",
                  peer));
  *out = slot.get();
  slots_.emplace(id, std::move(slot));
  return HubStatus::Ok();
}

HubStatus Membership::Attach(const proto::Hello& hello, WorkerLink* link, WorkerSlot** out) {
  if (!TokenMatches(hello.token())) return HubStatus::Error(Code::kUnauthenticated, kBadToken);
  WorkerSlot* slot = Find(hello.worker_id());
  if (!slot || !SecretMatches(*slot, hello.session_secret()))
    return HubStatus::Error(Code::kUnauthenticated, kBadSession);
  if (slot->state != WorkerSlot::State::kJoined)
    return HubStatus::Error(Code::kFailedPrecondition, "worker " + std::to_string(slot->id) +
                                                           " is " + StateName(slot->state) +
                                                           ", not waiting for a stream");
  slot->SetLink(link);
  slot->state = WorkerSlot::State::kWaiting;
  slot->attached = true;
  slot->session.stream_open = true;
  slot->placement = hello.placement();
  // Said where it matters (a layer off the CPU); the list itself, long for
  // a larger model, only at debug level (the whole of it is in the report).
  if (const std::string summary = PlacementSummary(slot->placement); !summary.empty())
    LogChurn(spdlog::level::info, fmt::format("worker {} placement: {}", slot->id, summary));
  else if (!slot->placement.empty())
    LogChurn(spdlog::level::debug,
             fmt::format("worker {} placement: {}", slot->id, BoundedText(slot->placement, 256)));
  *out = slot;
  return HubStatus::Ok();
}

HubStatus Membership::FindLeaving(const proto::LeaveRequest& req, WorkerSlot** out) {
  if (!TokenMatches(req.token())) return HubStatus::Error(Code::kUnauthenticated, kBadToken);
  WorkerSlot* slot = Find(req.worker_id());
  if (!slot || !SecretMatches(*slot, req.session_secret()))
    return HubStatus::Error(Code::kUnauthenticated, kBadSession);
  *out = slot;
  return HubStatus::Ok();
}

bool Membership::Ban(const WorkerSlot& slot, const std::string& why) {
  const bool was_full = bans_.full();
  if (bans_.Ban(slot.session.identity, why)) return true;
  if (!slot.session.identity.empty() && was_full) {
    static RateLimitedLog log;
    int64_t left_out = 0;
    if (log.ShouldLog(&left_out))
      spdlog::warn(
          "{} identities are banned already, the most kept: worker {} ({}) is not ({} more "
          "since the last such line)",
          IdentityBans::kMaxBanned, slot.id, slot.name, left_out);
  }
  return false;
}

bool Membership::Remove(WorkerSlot* slot) {
  slot->SetLink(nullptr);
  const bool was_in = slot->state != WorkerSlot::State::kGone;
  slot->state = WorkerSlot::State::kGone;
  slot->inbox.Release();
  return was_in;
}

bool Membership::StreamClosed(WorkerSlot* slot) {
  slot->session.stream_open = false;
  return Remove(slot);
}

void Membership::LeaveOut(WorkerSlot* slot, std::chrono::steady_clock::time_point now) {
  slot->state = WorkerSlot::State::kLate;
  slot->inbox.Discard();
  ++slot->stats.steps_missed;
  slot->quarantine.Strike(now);
}

std::vector<WorkerSlot*> Membership::ExpireJoins(std::chrono::steady_clock::time_point now) {
  std::vector<WorkerSlot*> expired;
  for (const auto& [id, s] : slots_)
    if (s->state == WorkerSlot::State::kJoined && now - s->session.joined_at >= kJoinExpiry) {
      Remove(s.get());
      expired.push_back(s.get());
    }
  return expired;
}

bool Membership::TokenMatches(const std::string& token) const {
  return rules_.token.empty() || ConstantTimeEquals(token, rules_.token);
}

bool Membership::SecretMatches(const WorkerSlot& slot, const std::string& secret) const {
  return ConstantTimeEquals(secret, slot.session.secret);
}

WorkerSlot* Membership::Find(int id) const {
  const auto it = slots_.find(id);
  return it == slots_.end() ? nullptr : it->second.get();
}

std::vector<WorkerSlot*> Membership::Participants() const {
  std::vector<WorkerSlot*> who;
  for (const auto& [id, s] : slots_)
    if (s->in_run()) who.push_back(s.get());
  return who;
}

std::vector<WorkerSlot*> Membership::NotGone() const {
  std::vector<WorkerSlot*> who;
  for (const auto& [id, s] : slots_)
    if (s->state != WorkerSlot::State::kGone) who.push_back(s.get());
  return who;
}

}  // namespace mt
