// The hub's messages to its workers, built from the step's plain state
// (assignments, the master's averaged segments, reasons) and encoded once
// by the transport (hub/transport/transport.h): the step logic decides what goes to
// whom, this turns it into protocol messages (proto/hub.proto), so that
// the coordinator and the round (hub/round/) build none themselves.
// Result, State, LeftOut and Stop may run on several threads at once (a
// segment is sent from the transport thread that completed it while the
// run thread broadcasts); the plan is the broadcasting thread's alone (the
// run thread, or the transport's fast path while the run thread waits).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/data/partition.h"
#include "hub.pb.h"
#include "hub/transport/transport.h"
#include "model.pb.h"

namespace mt {

struct HubConfig;
class CompressionChoice;
class MasterModel;
struct WorkerSlot;

class StepMessages {
 public:
  // `encoding`: the rounds' encoding, which joining workers and each plan
  // are told.
  StepMessages(MessageEncoder& encoder, const HubConfig& config, const proto::ModelSpec& spec,
               MasterModel& master, const CompressionChoice& encoding, int64_t global_batch);

  // ---- Joining. ----
  // The running statistics (batch norm) joining workers get.
  void SetRunningStats(std::vector<float> stats) { running_stats_ = std::move(stats); }
  // --dp-clip: what every worker does to its update (before the first Join).
  void SetPrivacy(proto::DifferentialPrivacy p) { privacy_ = std::move(p); }
  // --partition: worker id k gets shares[k % size] (empty: the shared order).
  void SetPartition(std::vector<ClassShare> shares) {
    partition_ = std::move(shares);
    share_samples_.clear();
    for (const ClassShare& s : partition_)
      share_samples_.push_back(static_cast<int64_t>(s.total()));
  }
  // The samples of worker `id`'s share; 0 without a partition. Read for
  // every contribution to every segment, so summed once, above.
  int64_t ShareSamples(int id) const {
    if (share_samples_.empty()) return 0;
    return share_samples_[static_cast<size_t>(id) % share_samples_.size()];
  }
  // What a worker admitted to slot `slot` needs to train; `trace`: it is
  // asked for its spans (mthub --trace).
  void FillJoinReply(const WorkerSlot& slot, bool trace, proto::JoinReply* reply) const;
  // mthub --secure-aggregation: what every JoinReply says of it.
  void SetSecureAggregation(const proto::SecureAggregation& settings) {
    secure_aggregation_ = settings;
  }

  // ---- A step. ----
  // The plan of `step` with every participant's assignment; `hub_time_us`
  // when tracing (0: not). It goes with the last result segment (Result
  // with `with_plan`) or alone (Plan).
  void SetPlan(int64_t step, int64_t hub_time_us, const std::vector<WorkerSlot*>& who);
  // Secure aggregation: the members of the next plan set, with their keys.
  void SetPlanMembers(std::vector<proto::SecAggMember> members) {
    plan_members_ = std::move(members);
  }
  Encoded Plan();
  // Segment k of the master's average as the result of `step` (of
  // `local_steps` local steps; 0: a gradient). The last segment carries
  // the round's mean loss and the plan set last. *payload: its payload
  // bytes as RunMetrics counts them.
  Encoded Result(size_t k, int64_t step, int64_t local_steps, bool last, double mean_loss,
                 int64_t* payload);
  // The master's full state (weights and optimizer slots) at `step`, chunk
  // by chunk, handed to `send` until it returns false.
  void State(int64_t step, const std::function<bool(const Encoded&)>& send);
  Encoded LeftOut(int64_t step, const std::string& reason);
  // A message built elsewhere (secure aggregation's, hub/secagg/).
  Encoded Encode(const proto::HubMessage& message) { return encoder_.Encode(message); }
  // A goodbye: the run is over for the worker (test_accuracy -1: unknown).
  Encoded Stop(const std::string& reason, int64_t steps, double test_accuracy);

 private:
  MessageEncoder& encoder_;
  const HubConfig& config_;
  const proto::ModelSpec& spec_;
  MasterModel& master_;
  const CompressionChoice& encoding_;
  const int64_t global_batch_;
  std::vector<float> running_stats_;  // guarded by the coordinator's lock
  proto::DifferentialPrivacy privacy_;
  std::vector<ClassShare> partition_;
  std::vector<int64_t> share_samples_;  // partition_'s totals
  proto::StepPlan plan_;
  std::optional<proto::SecureAggregation> secure_aggregation_;
  std::vector<proto::SecAggMember> plan_members_;
};

}  // namespace mt
