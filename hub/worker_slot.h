// What the hub knows about one worker: identity, the link it trains on, its
// gradient inbox for the current step, and its running statistics.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "hub.pb.h"
#include "hub/gradient_inbox.h"
#include "hub/transport.h"

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
  // Segments the aggregation scaled down (hub/robust_aggregate.h): an
  // honest worker now and then, a hostile one nearly always.
  int64_t clipped_segments = 0;
  // Payload bytes, headers excluded, as RunMetrics counts them: its
  // gradient in, the results sent to it.
  int64_t bytes_in = 0, bytes_out = 0;
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
             Compression compression)
      : id(id_), inbox(std::move(segments), param_count, compression) {}

  bool in_run() const { return state == State::kWaiting || state == State::kActive; }

  const int id;
  std::string name, peer, device;
  std::string placement;  // per layer, from Hello
  proto::DeviceInfo info;
  State state = State::kJoined;
  proto::Assignment assignment;  // of the step in progress
  GradientInbox inbox;
  WorkerStats stats;
  // --aggregate auto, 3+ workers: this step's contribution against the
  // others' (summed over segments), and the running mean of its cosine.
  double align_dot = 0, align_self = 0, align_others = 0;
  double alignment = 0;
  int alignment_steps = 0;
  bool needs_resync = false;
  bool gets_state = false;            // this step starts with the full model (join, resync)
  int max_batch = 0;                  // what fits in its memory budget
  int last_batch = 0;                 // of the previous step it took part in
  proto::DeviceStatus device_status;  // as of its last gradient
  std::string left_because;           // its Leave reason
  std::string session_secret;         // its Hello and Leave must carry it
  std::chrono::steady_clock::time_point joined_at;
  bool attached = false;  // it opened its stream (said Hello) at least once
  std::chrono::steady_clock::time_point complete_at;  // its gradient of this step was whole
  // Growing quarantine (hub/quarantine.h): leave-outs not yet forgiven, the
  // steps taken part in since the last, whether its late gradient is whole
  // (it may come back), and not before when.
  int strikes = 0;
  int64_t steps_since_strike = 0;
  bool back_ready = false;
  std::chrono::steady_clock::time_point quarantined_until;

  // Sends on the worker's link while it is open. The transport detaches the
  // link (under link_mu) before the link goes away, so nothing is ever sent
  // to a finished stream.
  bool Send(const Encoded& m) {
    std::lock_guard<std::mutex> lock(link_mu);
    return link != nullptr && link->Send(m);
  }
  void SetLink(WorkerLink* l) {
    std::lock_guard<std::mutex> lock(link_mu);
    link = l;
  }

 private:
  std::mutex link_mu;
  WorkerLink* link = nullptr;
};

const char* StateName(WorkerSlot::State s);

}  // namespace mt
