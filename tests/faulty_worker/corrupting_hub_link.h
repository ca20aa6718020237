// The hostile worker's link: it corrupts every gradient chunk (or round's
// change) a worker sends (gradient_corruption.h) and passes the rest
// through, so the worker computes and follows the hub honestly while what
// reaches the hub is poison. mtworker_faulty decorates every session with
// it; tests put it over an in-memory link.
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

class CorruptingHubLink final : public HubLink {
 public:
  // `join`: the session's, for how chunks are encoded and where each
  // segment ends.
  CorruptingHubLink(HubLink& inner, const proto::JoinReply& join, GradientCorruption corruption);

  bool Send(const proto::WorkerMessage& message) override;
  // Passes the hub's messages on, noting the averages it sends (what
  // against-average pushes against).
  bool Read(proto::HubMessage* message) override;
  void CloseSending() override { inner_.CloseSending(); }

 private:
  // Floats in the segment that begins at `offset`: up to the next
  // segment's begin above it, or the model's end.
  size_t SegmentSize(uint64_t offset) const;

  HubLink& inner_;
  GradientCorruption corruption_;
  std::mutex mu_;  // Read and Send may run on different threads
  Corruptor corruptor_;
  std::vector<uint64_t> begins_;
  uint64_t param_count_;
  proto::WorkerMessage outgoing_;
  std::vector<float> values_;   // a packed chunk's floats, decoded
  std::vector<float> average_;  // a packed result's floats, decoded
};

// RunWorker's decorator: every session's link corrupts with `corruption`.
HubLinkDecorator CorruptEverySession(GradientCorruption corruption);

}  // namespace mt::faulty
