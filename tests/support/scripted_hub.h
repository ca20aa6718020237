// Plays a hub to one worker's HubSession in memory, no gRPC: the session
// reads a script of hub messages through its HubLink and what it sends is
// kept. For the session's tests, the hostile-hub tests and the worker's
// fuzzer, which feed it messages no honest hub sends.
#pragma once

#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/model/model_spec.h"
#include "core/optim/optimizer_proto.h"
#include "hub.pb.h"
#include "tests/support/idx_writer.h"
#include "worker/compute_devices.h"
#include "worker/hub_link.h"
#include "worker/hub_session.h"
#include "worker/local_trainer.h"
#include "worker/worker_control.h"

namespace mt::test_support {

class ScriptedLink final : public HubLink {
 public:
  std::deque<proto::HubMessage> script;
  std::vector<proto::WorkerMessage> sent;
  bool closed = false;
  // Runs before the hub's message number i is read (e.g. to let the steps
  // a worker takes ahead happen first).
  std::function<void(size_t i)> before_read;

  bool Send(const proto::WorkerMessage& m) override {
    sent.push_back(m);
    return true;
  }
  // The script's end is the hub going away.
  bool Read(proto::HubMessage* m) override {
    if (before_read) before_read(reads_);
    ++reads_;
    if (script.empty()) return false;
    *m = std::move(script.front());
    script.pop_front();
    return true;
  }
  void CloseSending() override { closed = true; }

 private:
  size_t reads_ = 0;
};

// A worker's side of a session, built once (loading data and placing
// layers is the slow part); Run() plays a script against a fresh session.
class ScriptedWorker {
 public:
  static constexpr int kBatch = 16;

  // `model`: LeNet-5 unless given (the fuzzer uses a tiny one, so its
  // inputs stay small and its steps fast).
  explicit ScriptedWorker(const std::string& dir, const std::string& compression = "none",
                          const proto::ModelSpec& model = LoadModelSpec("lenet5"))
      : devices_(DeviceChoice::kCpu, 1) {
    std::filesystem::create_directories(dir);
    WriteIdxDataset(dir, 64, 16, 3);
    cfg_.threads = 1;
    cfg_.read_system_device_state = false;
    cfg_.log_every_seconds = 3600;
    spec_.model = model;
    spec_.dataset = dir;
    spec_.capacity = kBatch;
    spec_.seed = 1;
    trainer_ = std::make_unique<LocalTrainer>(devices_, spec_);
    join_.set_worker_id(0);
    *join_.mutable_model() = spec_.model;
    *join_.mutable_optimizer() = ToProto(spec_.optimizer);
    join_.set_dataset(dir);
    join_.set_seed(1);
    join_.set_global_batch(kBatch);
    join_.set_digest_every(1);
    join_.set_param_count(trainer_->model().ParamCount());
    join_.add_segments(0);  // one segment: the model fits one chunk
    join_.set_compression(compression == "int8"   ? proto::COMPRESSION_INT8
                          : compression == "fp16" ? proto::COMPRESSION_FP16
                                                  : proto::COMPRESSION_NONE);
  }

  size_t params() const { return trainer_->model().ParamCount(); }
  LocalTrainer& trainer() { return *trainer_; }
  // What a trainer must be built from to compute as this worker does.
  TrainerSpec spec() const { return spec_; }
  // What the worker sent in the last Run, in order.
  const std::vector<proto::WorkerMessage>& sent() const { return link_->sent; }
  const proto::JoinReply& join() const { return join_; }
  WorkerTotals& totals() { return totals_; }

  // The first message of a session: the full model, weights and an
  // optimizer that never stepped.
  proto::HubMessage State() const {
    proto::HubMessage m;
    auto* s = m.mutable_state();
    s->set_step(0);
    s->set_offset(0);
    for (size_t i = 0; i < params(); ++i) s->add_values(0.01f);
    *s->mutable_optimizer()->mutable_settings() = ToProto(OptimizerConfig{});
    s->set_last(true);
    return m;
  }

  // A plan for worker 0; `compression`: how it encodes the step's gradient.
  static proto::HubMessage Plan(int64_t step, int64_t offset, int batch, int local_steps = 0,
                                int64_t stride = 0,
                                proto::Compression compression = proto::COMPRESSION_NONE) {
    proto::HubMessage m;
    auto* p = m.mutable_plan();
    p->set_step(step);
    p->set_compression(compression);
    auto* a = p->add_assignments();
    a->set_worker_id(0);
    a->set_step(step);
    a->set_offset(offset);
    a->set_batch(batch);
    a->set_local_steps(local_steps);
    a->set_stride(stride);
    return m;
  }

  // Runs a fresh session over `script`, through `decorate`'s link if
  // given; what it throws propagates.
  HubSession::Outcome Run(std::deque<proto::HubMessage> script, int* writes = nullptr,
                          const HubLinkDecorator& decorate = nullptr) {
    link_ = std::make_unique<ScriptedLink>();  // kept: sent() reads it, also after a throw
    link_->script = std::move(script);
    const std::unique_ptr<HubLink> decorated = decorate ? decorate(*link_, join_) : nullptr;
    WorkerControl control;
    if (before_read_) link_->before_read = [&](size_t i) { before_read_(control, i); };
    HubSession session(cfg_, join_, decorated ? *decorated : *link_, *trainer_, totals_, control,
                       nullptr);
    const HubSession::Outcome out = session.Run();
    if (writes) *writes = static_cast<int>(link_->sent.size());
    return out;
  }

  proto::JoinReply& mutable_join() { return join_; }
  // Before each of the hub's messages is read, with the session's control
  // (its status counts the steps taken).
  void set_before_read(std::function<void(const WorkerControl&, size_t i)> hook) {
    before_read_ = std::move(hook);
  }

 private:
  ComputeDevices devices_;
  WorkerConfig cfg_;
  TrainerSpec spec_;
  std::unique_ptr<LocalTrainer> trainer_;
  proto::JoinReply join_;
  std::unique_ptr<ScriptedLink> link_;
  std::function<void(const WorkerControl&, size_t)> before_read_;
  WorkerTotals totals_;
};

}  // namespace mt::test_support
