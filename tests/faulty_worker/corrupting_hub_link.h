// The hostile worker's link: it corrupts every gradient chunk (or round's
// change) a worker sends (gradient_corruption.h) and passes the rest
// through, so the worker computes and follows the hub honestly while what
// reaches the hub is poison. It can also lie about the worker's speed in
// Hello, and hold each contribution before sending it (a device that is
// fast but answers late). mtworker_faulty decorates every session with it;
// tests put it over an in-memory link.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "core/compress/gradient_codec.h"
#include "hub.pb.h"
#include "tests/faulty_worker/gradient_corruption.h"
#include "worker/hub_link.h"

namespace mt::faulty {

struct Misbehaviour {
  GradientCorruption corruption;
  double claim_ms_per_sample = 0;  // > 0: what Hello claims instead of the measured time
  int hold_ms = 0;                 // > 0: each step's contribution waits this long first
  bool active() const { return corruption.active() || claim_ms_per_sample > 0 || hold_ms > 0; }
};

class CorruptingHubLink final : public HubLink {
 public:
  // `join`: the session's, for how chunks are encoded and where each
  // segment ends.
  CorruptingHubLink(HubLink& inner, const proto::JoinReply& join, Misbehaviour misbehaviour);

  bool Send(const proto::WorkerMessage& message) override;
  // Passes the hub's messages on, noting the averages it sends (what
  // against-average pushes against).
  bool Read(proto::HubMessage* message) override;
  void CloseSending() override { inner_.CloseSending(); }

 private:
  // Floats in the segment that begins at `offset`: up to the next
  // segment's begin above it, or the model's end.
  size_t SegmentSize(uint64_t offset) const;

  // Hello with the claimed speed; a held contribution after its wait.
  bool SendOther(const proto::WorkerMessage& message);

  HubLink& inner_;
  GradientCorruption corruption_;
  double claim_ms_per_sample_;
  int hold_ms_;
  int64_t held_step_ = -1;  // the last step whose contribution was held
  std::mutex mu_;           // Read and Send may run on different threads
  Corruptor corruptor_;
  std::vector<uint64_t> begins_;
  uint64_t param_count_;
  proto::WorkerMessage outgoing_;
  std::vector<float> values_;   // a packed chunk's floats, decoded
  std::vector<float> average_;  // a packed result's floats, decoded
};

// RunWorker's decorator: every session's link misbehaves so.
HubLinkDecorator CorruptEverySession(Misbehaviour misbehaviour);

}  // namespace mt::faulty
