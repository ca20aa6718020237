// Who is in the run: admission (protocol version, token, memory budget),
// each worker's slot and the transitions between its states. Not
// thread-safe: the step coordinator calls it under its own lock.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hub.pb.h"
#include "hub/membership/departed_workers.h"
#include "hub/membership/identity_bans.h"
#include "hub/membership/lineages.h"
#include "hub/membership/peer_limits.h"
#include "hub/membership/worker_slot.h"
#include "hub/transport/hub_status.h"
#include "proto/wire.h"

namespace mt {

struct AdmissionRules {
  std::string token;  // empty: anyone may join
  int64_t global_batch = 0;
  // What the model costs a worker in memory, fixed and per sample: the
  // hub turns each worker's budget into a batch cap with these.
  size_t fixed_bytes = 0, bytes_per_sample = 0;
  size_t param_count = 0;
  std::vector<wire::Segment> segments;  // how gradients travel (proto/wire.h)
  std::vector<ParamMatrix> matrices;    // the model's, which lowrank factors
  // At most this many workers in the run (joined and not gone) at once; 0:
  // no cap. The hub's own default is HubConfig::max_workers_or_default().
  int max_workers = 0;
};

class Membership {
 public:
  // Joins that have not opened their stream yet: at most this many at once,
  // each for at most kJoinExpiry (then its slot is gone and the worker must
  // join again). A flood of Joins then costs the hub a bounded amount.
  static constexpr int kMaxPendingJoins = 64;
  // And at most this many from one address, so one peer cannot fill them.
  // Refused with UNAVAILABLE: an honest worker retries with backoff.
  static constexpr int kMaxPendingJoinsPerHost = 8;
  static constexpr std::chrono::seconds kJoinExpiry{30};

  explicit Membership(AdmissionRules rules) : rules_(std::move(rules)) {}

  // A new slot for a worker that asks to join, or why not. `identity`: what
  // the transport proved of the peer (hub/membership/identity_bans.h), empty if nothing;
  // one banned earlier in the run is refused with kPermissionDenied.
  HubStatus Admit(const proto::JoinRequest& request, const std::string& peer, WorkerSlot** slot,
                  const std::string& identity = "");
  // The slot's worker was dropped for a hostile contribution (`why`): its
  // identity may not join again this run. Returns whether it is banned now.
  bool Ban(const WorkerSlot& slot, const std::string& why);
  const IdentityBans& bans() const { return bans_; }
  // The worker's stream opened with Hello: it waits for the next step.
  HubStatus Attach(const proto::Hello& hello, WorkerLink* link, WorkerSlot** slot);
  // Slots whose Join went unanswered by a stream for kJoinExpiry: gone now,
  // their memory freed. Returns them, for the caller to report.
  std::vector<WorkerSlot*> ExpireJoins(std::chrono::steady_clock::time_point now);
  // The slot named by a Leave, once its token and session secret check out.
  HubStatus FindLeaving(const proto::LeaveRequest& request, WorkerSlot** slot);
  // Out of the run for good: no more sends, no inbox. Returns whether it was in.
  bool Remove(WorkerSlot* slot);
  // Its Train stream has ended: out of the run (Remove), and nothing more
  // will come from it.
  bool StreamClosed(WorkerSlot* slot);
  // Frees the slots of workers gone for good whose streams have closed,
  // but those in `keep` (a step's participants, which the run thread may
  // read outside the lock): a peer that joins, says Hello and goes, again
  // and again, costs the hub nothing that stays. Each attached one is
  // first handed to `row_of`, whose row goes into departed().
  template <class RowOf>
  void FreeDeparted(const std::vector<WorkerSlot*>& keep, RowOf&& row_of) {
    for (auto it = slots_.begin(); it != slots_.end();) {
      WorkerSlot* s = it->second.get();
      const bool freeable = s->state == WorkerSlot::State::kGone && !s->session.stream_open &&
                            std::find(keep.begin(), keep.end(), s) == keep.end();
      if (!freeable) {
        ++it;
        continue;
      }
      if (s->attached)
        departed_.Add(row_of(*s), s->session.said_leave);
      else
        ++departed_.joins_unopened;
      it = slots_.erase(it);
    }
  }
  const DepartedWorkers& departed() const { return departed_; }
  // ---- Deadlines and quarantine (hub/membership/quarantine.h). ----
  // Left out of the step at `now` for missing its deadline: late, its
  // gradient discarded, a strike that may quarantine it.
  void LeaveOut(WorkerSlot* slot, std::chrono::steady_clock::time_point now);
  // Late workers whose gradient is whole and whose quarantine is over at
  // `now` wait for the next step again; `back(slot)` hears of each.
  template <class Fn>
  void ReleaseQuarantined(std::chrono::steady_clock::time_point now, Fn&& back) {
    for (const auto& [id, s] : slots_) {
      if (s->state != WorkerSlot::State::kLate || !s->quarantine.MayReturn(now)) continue;
      s->state = WorkerSlot::State::kWaiting;
      s->quarantine.back_ready = false;
      back(s.get());
    }
  }

  // After the run: every Join is told the run has ended.
  void Close() { closed_ = true; }
  bool closed() const { return closed_; }

  WorkerSlot* Find(int id) const;
  // Workers that take part in the next step (waiting or active), in id order.
  std::vector<WorkerSlot*> Participants() const;
  std::vector<WorkerSlot*> NotGone() const;
  // By id; workers gone for good are freed (FreeDeparted), their ids not reused.
  const std::map<int, std::unique_ptr<WorkerSlot>>& all() const { return slots_; }

 private:
  // The batch cap for a memory budget (0: none), or why it holds no batch.
  HubStatus BatchCap(int64_t budget_bytes, int* max_batch) const;
  bool TokenMatches(const std::string& token) const;
  bool SecretMatches(const WorkerSlot& slot, const std::string& secret) const;

  AdmissionRules rules_;
  PeerLimits limits_;
  bool closed_ = false;
  std::map<int, std::unique_ptr<WorkerSlot>> slots_;  // by worker id
  int next_id_ = 0;
  DepartedWorkers departed_;
  IdentityBans bans_;
  Lineages lineages_;
};

}  // namespace mt
