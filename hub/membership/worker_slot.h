// What the hub knows about one worker: identity, the link it trains on, its
// gradient inbox for the current step, and its running statistics.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "hub.pb.h"
#include "hub/aggregation/gradient_inbox.h"
#include "hub/membership/quarantine.h"
#include "hub/round/assignment.h"
#include "hub/transport/transport.h"

namespace mt {

struct WorkerStats {
  int64_t steps = 0;
  int64_t samples = 0;
  double compute_ms = 0;
  int64_t steps_missed = 0;
  int64_t resyncs = 0;
  // Weight digests compared with the hub's, so that no resync means the
  // weights matched rather than that nothing was compared.
  int64_t digests_checked = 0;
  // Segments the aggregation scaled down (hub/aggregation/robust_aggregate.h): an
  // honest worker now and then, a hostile one nearly always.
  int64_t clipped_segments = 0;
  // The highest persistence of its residual (hub/round/persistence_watch.h):
  // an honest worker's stays near the noise floor.
  double persistence_peak = 0;
  // Payload bytes, headers excluded, as RunMetrics counts them: its
  // gradient in, the results sent to it. bytes_out is also added to by the
  // run thread's broadcast, which sends outside the lock (PublishStep)
  // while a status snapshot may read it under the lock.
  int64_t bytes_in = 0;
  std::atomic<int64_t> bytes_out{0};
};

// The session a Join opened: only its holder may speak for the worker's id.
struct WorkerSession {
  std::string secret;  // its Hello and Leave must carry it
  std::chrono::steady_clock::time_point joined_at;
  // Its Train stream is open: the slot stays (chunks may still come) until
  // it closes, even after a Leave.
  bool stream_open = false;
  bool said_leave = false;
  // What the transport proved of the worker (the SHA-256 fingerprint of its
  // mutual-TLS client certificate), or empty: see hub/membership/identity_bans.h.
  std::string identity;
  // What its sessions share across Leave and Join (hub/membership/lineages.h):
  // the hostile-worker watches follow it; -1: none.
  int lineage = -1;
};

// The worker's link, which the transport detaches (under the lock) before
// the link goes away, so nothing is ever sent to a finished stream.
class SlotLink {
 public:
  bool Send(const Encoded& m) {
    std::lock_guard<std::mutex> lock(mu_);
    return link_ != nullptr && link_->Send(m);
  }
  void Set(WorkerLink* link) {
    std::lock_guard<std::mutex> lock(mu_);
    link_ = link;
  }

 private:
  std::mutex mu_;
  WorkerLink* link_ = nullptr;
};

// When a worker gets the whole model rather than the step's result: on
// joining, and after its weights were found to differ from the hub's.
struct FullState {
  bool this_step = false;  // the step in progress started with it
  bool next_step = false;  // a resync is due: the next step starts with it
};

struct WorkerSlot {
  enum class State {
    kJoined,   // Join answered, no stream yet
    kWaiting,  // stream open, waiting for the next step boundary to get the model
    kActive,   // in the step loop
    kLate,     // missed a step's deadline; back once its late gradient arrives
    kGone,     // left, dropped or refused
  };

  WorkerSlot(int id_, std::vector<wire::Segment> segments, size_t param_count,
             const std::vector<ParamMatrix>& matrices = {})
      : id(id_), inbox(std::move(segments), param_count, matrices) {}

  bool in_run() const { return state == State::kWaiting || state == State::kActive; }

  const int id;
  std::string name, peer, device;
  std::string placement;  // per layer, from Hello
  proto::DeviceInfo info;
  State state = State::kJoined;
  Assignment assignment;  // of the step in progress
  GradientInbox inbox;    // also when its gradient of this step was whole
  WorkerStats stats;
  // --aggregate auto, 3+ workers: the running mean of the cosine of its
  // contributions with the others' (hub/round/alignment_watch.h).
  double alignment = 0;
  FullState full_state;
  int max_batch = 0;                  // what fits in its memory budget
  int last_batch = 0;                 // of the previous step it took part in
  proto::DeviceStatus device_status;  // as of its last gradient
  std::string left_because;           // its Leave reason
  WorkerSession session;
  bool attached = false;        // it opened its stream (said Hello) at least once
  QuarantineRecord quarantine;  // hub/membership/quarantine.h
  // Present, but left out of the rounds: it would make them slower
  // (hub/policy/attendance.h).
  bool set_aside = false;

  // Sends on the worker's link while it is open.
  bool Send(const Encoded& m) { return link.Send(m); }
  void SetLink(WorkerLink* l) { link.Set(l); }

 private:
  SlotLink link;
};

const char* StateName(WorkerSlot::State s);

}  // namespace mt
