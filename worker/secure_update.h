// A worker's part in secure aggregation (the hub's JoinReply.
// secure_aggregation; core/secagg/secagg_client.h does the work), over
// protocol messages: its box key for the Hello, a bundle for the holders
// the hub names, the round's pair masks from the plan's members, each
// segment masked as it leaves (GradientChunk.masked), and its shares
// opened when the hub unmasks a round.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/secagg/secagg_client.h"
#include "hub.pb.h"

namespace mt {

class SecureUpdate {
 public:
  // Throws HubProtocolError (worker/hub_session.h) on settings it cannot
  // use. The updates cover parameters [begin, end).
  SecureUpdate(const proto::JoinReply& join, size_t begin);

  std::string box_key() const;
  // The hub's holders: a bundle shared among them.
  proto::WorkerMessage OnHolders(const proto::SecAggHolders& holders);
  // A plan this worker has an assignment in: begins the round, sets this
  // worker's weight (its share of the plan's samples), and returns its
  // next bundle, for the same holders.
  proto::WorkerMessage OnPlan(const proto::StepPlan& plan);
  // Segment [first, first + n) of the update, weighted and masked.
  void Mask(size_t first, const float* values, size_t n, uint32_t* out);
  proto::WorkerMessage OnUnmask(const proto::SecAggUnmask& request);

 private:
  proto::WorkerMessage Bundle();

  int worker_id_;
  size_t begin_;
  std::unique_ptr<secagg::SecAggClient> client_;
  std::vector<secagg::Holder> holders_;
  double weight_ = 0;
  int64_t step_ = -1;
};

}  // namespace mt
