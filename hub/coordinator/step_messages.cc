#include "hub/coordinator/step_messages.h"

#include "core/optim/optimizer_proto.h"
#include "hub/aggregation/master_model.h"
#include "hub/hub_config.h"
#include "hub/membership/worker_slot.h"
#include "hub/policy/compression_choice.h"
#include "proto/wire.h"
#include "wire/compression_proto.h"

namespace mt {

StepMessages::StepMessages(MessageEncoder& encoder, const HubConfig& config,
                           const proto::ModelSpec& spec, MasterModel& master,
                           const CompressionChoice& encoding, int64_t global_batch)
    : encoder_(encoder),
      config_(config),
      spec_(spec),
      master_(master),
      encoding_(encoding),
      global_batch_(global_batch) {}

void StepMessages::FillJoinReply(const WorkerSlot& slot, bool trace,
                                 proto::JoinReply* reply) const {
  reply->set_worker_id(slot.id);
  *reply->mutable_model() = spec_;
  *reply->mutable_optimizer() = ToProto(master_.optimizer().config());
  reply->set_dataset(config_.dataset);
  reply->set_seed(config_.seed);
  reply->set_global_batch(static_cast<int32_t>(global_batch_));
  reply->set_digest_every(config_.digest_every);
  reply->set_param_count(master_.param_count());
  reply->set_max_batch(slot.max_batch);
  reply->set_compression(ToProto(encoding_.current()));
  for (const wire::Segment& seg : master_.segments()) reply->add_segments(seg.begin);
  reply->set_overlap_rounds(config_.local_sgd.rounds_overlap());
  reply->set_session_secret(slot.session.secret);
  for (const std::string& name : master_.frozen()) reply->add_frozen_layers(name);
  reply->mutable_running_stats()->Add(running_stats_.begin(), running_stats_.end());
  if (trace) reply->set_trace(true);
  if (secure_aggregation_) *reply->mutable_secure_aggregation() = *secure_aggregation_;
  if (config_.local_sgd.prox_mu > 0)
    reply->set_prox_mu(static_cast<float>(config_.local_sgd.prox_mu));
  if (config_.local_sgd.drift_correction) reply->set_drift_correction(true);
  if (privacy_.clip() > 0) *reply->mutable_privacy() = privacy_;
  proto::DataSettings* data = reply->mutable_data();
  data->set_test_fraction(config_.data.test_fraction);
  data->set_skip_bad_images(config_.data.skip_bad_images);
  // The hub resolved auto (Hub::Hub), so both are set.
  data->set_augment_flip(config_.data.augment.flip.value_or(false));
  data->set_augment_crop(config_.data.augment.crop.value_or(false));
  if (!partition_.empty()) {
    const ClassShare& share = partition_[static_cast<size_t>(slot.id) % partition_.size()];
    data->mutable_share_start()->Add(share.start.begin(), share.start.end());
    data->mutable_share_count()->Add(share.count.begin(), share.count.end());
  }
}

void StepMessages::SetPlan(int64_t step, int64_t hub_time_us, const std::vector<WorkerSlot*>& who) {
  plan_.Clear();
  plan_.set_step(step);
  // The round's encoding both ways: the master broadcasts its result so too.
  plan_.set_compression(ToProto(encoding_.current()));
  // Tracing: when it left, for each worker's clock offset (hub/report/hub_trace.h).
  if (hub_time_us != 0) plan_.set_hub_time_us(hub_time_us);
  for (const proto::SecAggMember& m : plan_members_) *plan_.add_secagg_members() = m;
  for (const WorkerSlot* s : who) {
    const Assignment& a = s->assignment;
    proto::Assignment* p = plan_.add_assignments();
    p->set_step(a.step);
    p->set_epoch(a.epoch);
    p->set_offset(a.offset);
    p->set_batch(a.batch);
    p->set_worker_id(a.worker_id);
    p->set_local_steps(a.local_steps);
    p->set_stride(a.stride);
  }
}

Encoded StepMessages::Plan() {
  proto::HubMessage m;
  *m.mutable_plan() = plan_;
  return encoder_.Encode(m);
}

Encoded StepMessages::Result(size_t k, int64_t step, int64_t local_steps, bool last,
                             double mean_loss, int64_t* payload) {
  proto::HubMessage m;
  proto::StepResult* r = m.mutable_result();
  const wire::Segment& seg = master_.segments()[k];
  r->set_step(step);
  r->set_local_steps(static_cast<int32_t>(local_steps));
  r->set_offset(seg.begin);
  const Compression encoding = master_.encoded_with(k);
  r->set_compression(ToProto(encoding));
  if (encoding == Compression::kNone)
    wire::PackFloats(master_.average() + seg.begin, seg.size(), r->mutable_values());
  else
    r->set_packed(master_.encoded_segment(k));
  if (last) {
    r->set_last(true);
    r->set_mean_loss(mean_loss);
    *r->mutable_plan() = plan_;
  }
  *payload = static_cast<int64_t>(r->values_size() * sizeof(float) + r->packed().size());
  return encoder_.Encode(m);
}

void StepMessages::State(int64_t step, const std::function<bool(const Encoded&)>& send) {
  OptimizerState state;
  const std::vector<float> all = master_.FullState(&state);
  const size_t chunks = wire::ChunkCount(all.size());
  proto::HubMessage m;
  for (size_t c = 0; c < chunks; ++c) {
    auto* s = m.mutable_state();
    const wire::ChunkRange r = wire::Chunk(c, all.size());
    s->set_step(step);
    s->set_offset(r.begin);
    wire::PackFloats(all.data() + r.begin, r.size, s->mutable_values());
    if (c + 1 == chunks) {
      s->set_last(true);
      *s->mutable_optimizer() = ToProto(state);
    }
    if (!send(encoder_.Encode(m))) return;  // the transport notices that it broke
  }
}

Encoded StepMessages::LeftOut(int64_t step, const std::string& reason) {
  proto::HubMessage m;
  m.mutable_left_out()->set_step(step);
  m.mutable_left_out()->set_reason(reason);
  return encoder_.Encode(m);
}

Encoded StepMessages::Stop(const std::string& reason, int64_t steps, double test_accuracy) {
  proto::HubMessage m;
  m.mutable_stop()->set_reason(reason);
  m.mutable_stop()->set_steps(steps);
  m.mutable_stop()->set_test_accuracy(test_accuracy);
  return encoder_.Encode(m);
}

}  // namespace mt
