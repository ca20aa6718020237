// A worker checks what a hub sends as strictly as the hub checks workers: a
// hostile hub (or anyone on the path) gets a clear refusal, never a write
// outside the worker's buffers, an overflow or a loop without end. The
// ASan/UBSan job runs these too; tests/fuzz/worker_hub_messages_fuzz.cc
// goes further.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <limits>
#include <stdexcept>
#include <string>

#include "kernels/cpu/cpu_backend.h"
#include "proto/wire.h"
#include "tests/support/files.h"
#include "tests/support/scripted_hub.h"
#include "worker/join_reply_check.h"

namespace mt {
namespace {

using test_support::ScriptedWorker;
constexpr uint64_t kHuge = std::numeric_limits<uint64_t>::max();
constexpr int64_t kMaxI64 = std::numeric_limits<int64_t>::max();

class HostileHub : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = test_support::FreshTempDir("hostile-hub");
    worker_ = new ScriptedWorker(dir_.string());
  }
  static void TearDownTestSuite() {
    delete worker_;
    std::filesystem::remove_all(dir_);
  }

  // The session must refuse `bad` (after a valid state) with an error that
  // says the hub sent it.
  static void ExpectRefused(const proto::HubMessage& bad, const std::string& says) {
    std::deque<proto::HubMessage> script{worker_->State(), bad};
    try {
      worker_->Run(script);
      FAIL() << "accepted: " << bad.ShortDebugString().substr(0, 300);
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  }

  static std::filesystem::path dir_;
  static ScriptedWorker* worker_;
};
std::filesystem::path HostileHub::dir_;
ScriptedWorker* HostileHub::worker_ = nullptr;

TEST_F(HostileHub, AnHonestScriptTrainsAndSends) {
  // The baseline the refusals below are measured against: a state and a
  // plan make the worker compute and send its gradient.
  int writes = 0;
  const auto out = worker_->Run({worker_->State(), ScriptedWorker::Plan(0, 0, 8)}, &writes);
  EXPECT_EQ(out, HubSession::Outcome::kBroken);  // the script ended: the hub went away
  EXPECT_EQ(writes, 1);                          // one segment with the report
}

TEST_F(HostileHub, StateChunksThatWouldWrapTheBoundsCheckAreRefused) {
  for (const uint64_t offset : {kHuge, kHuge - 3, kHuge / 4 + 1, uint64_t{1} << 62}) {
    proto::HubMessage m;
    m.mutable_state()->set_offset(offset);
    for (int i = 0; i < 8; ++i) m.mutable_state()->add_values(1);
    ExpectRefused(m, "hub sent a malformed chunk");
  }
  // Just past the end of what the worker stages.
  proto::HubMessage m = worker_->State();
  m.mutable_state()->set_offset(3 * worker_->params() - 4);
  m.mutable_state()->mutable_values()->Resize(8, 0.0f);
  ExpectRefused(m, "hub sent a malformed chunk");
}

TEST_F(HostileHub, ResultChunksAtForeignOffsetsAreRefused) {
  for (const uint64_t offset : {kHuge, kHuge - 3, uint64_t{1}, uint64_t{worker_->params()}}) {
    proto::HubMessage r;
    r.mutable_result()->set_offset(offset);
    r.mutable_result()->add_values(1);
    std::deque<proto::HubMessage> script{worker_->State(), ScriptedWorker::Plan(0, 0, 8), r};
    EXPECT_THROW(worker_->Run(script), std::runtime_error) << offset;
  }
  // The right offset with too few values.
  proto::HubMessage r;
  r.mutable_result()->set_offset(0);
  r.mutable_result()->add_values(1);
  r.mutable_result()->set_last(true);
  EXPECT_THROW(worker_->Run({worker_->State(), ScriptedWorker::Plan(0, 0, 8), r}),
               std::runtime_error);
}

TEST_F(HostileHub, ARoundResultOutOfTurnIsRefused) {
  proto::HubMessage r;
  auto* res = r.mutable_result();
  res->set_offset(0);
  for (size_t i = 0; i < worker_->params(); ++i) res->add_values(0);
  res->set_last(true);
  res->set_local_steps(4);  // but no round was computed
  EXPECT_THROW(worker_->Run({worker_->State(), ScriptedWorker::Plan(0, 0, 8), r}),
               std::runtime_error);
}

TEST_F(HostileHub, BatchesOutsideWhatTheWorkerHoldsAreRefused) {
  for (const int b : {0, -1, ScriptedWorker::kBatch + 1, std::numeric_limits<int>::max(),
                      std::numeric_limits<int>::min()})
    ExpectRefused(ScriptedWorker::Plan(0, 0, b), "hub assigned a batch of");
}

TEST_F(HostileHub, PositionsThatWouldOverflowAreRefused) {
  ExpectRefused(ScriptedWorker::Plan(0, kMaxI64, 8), "malformed assignment");
  ExpectRefused(ScriptedWorker::Plan(0, kMaxI64 - 4, 8), "malformed assignment");
  ExpectRefused(ScriptedWorker::Plan(0, -1, 8), "malformed assignment");
  ExpectRefused(ScriptedWorker::Plan(kMaxI64, 0, 8), "malformed assignment");
  ExpectRefused(ScriptedWorker::Plan(-5, 0, 8), "malformed assignment");
  ExpectRefused(ScriptedWorker::Plan(0, 0, 8, 4, kMaxI64), "malformed assignment");
  ExpectRefused(ScriptedWorker::Plan(0, 0, 8, 4, -16), "malformed assignment");
  // In range for the arithmetic but beyond the 64 samples the worker has.
  ExpectRefused(ScriptedWorker::Plan(0, 60, 8), "beyond the 64 training samples");
  ExpectRefused(ScriptedWorker::Plan(0, 0, 8, 4, 1000), "beyond the 64 training samples");
}

TEST_F(HostileHub, RoundsWithoutEndAreRefusedBeforeComputing) {
  for (const int h : {std::numeric_limits<int>::max(), wire::kMaxLocalSteps + 1, -3}) {
    const int64_t before = worker_->totals().steps;
    ExpectRefused(ScriptedWorker::Plan(0, 0, 8, h, 8), "local steps");
    EXPECT_EQ(worker_->totals().steps, before) << "computed before refusing " << h;
  }
}

TEST(JoinReplyCheck, RefusesFieldsOutOfRangeByName) {
  proto::JoinReply ok;
  ok.set_worker_id(0);
  ok.set_global_batch(64);
  ok.set_param_count(10);
  ok.add_segments(0);
  EXPECT_NO_THROW(CheckJoinReply(ok));
  auto refused = [&](auto mutate, const std::string& field) {
    proto::JoinReply j = ok;
    mutate(j);
    try {
      CheckJoinReply(j);
      ADD_FAILURE() << field << " accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  refused([](proto::JoinReply& j) { j.set_worker_id(-1); }, "worker id");
  refused([](proto::JoinReply& j) { j.set_global_batch(0); }, "global batch");
  refused([](proto::JoinReply& j) { j.set_global_batch(kMaxWorkerBatch + 1); }, "global batch");
  refused([](proto::JoinReply& j) { j.set_max_batch(-2); }, "max batch");
  refused([](proto::JoinReply& j) { j.set_digest_every(-1); }, "digest every");
  refused([](proto::JoinReply& j) { j.set_param_count(0); }, "parameter count");
  refused([](proto::JoinReply& j) { j.clear_segments(); }, "segment count");
  refused([](proto::JoinReply& j) { j.set_prox_mu(std::nanf("")); }, "prox mu");
  refused([](proto::JoinReply& j) { j.set_prox_mu(1e30f); }, "prox mu");
  refused([](proto::JoinReply& j) { j.set_prox_mu(-1); }, "prox mu");
  refused([](proto::JoinReply& j) { j.mutable_privacy()->set_clip(-1); }, "privacy clip");
  refused([](proto::JoinReply& j) { j.mutable_privacy()->set_clip(std::nan("")); }, "privacy clip");
  refused([](proto::JoinReply& j) { j.mutable_privacy()->set_noise_stddev(1e300); },
          "privacy noise");
  refused([](proto::JoinReply& j) { j.mutable_data()->set_test_fraction(1.5); }, "test fraction");
  refused(
      [](proto::JoinReply& j) {
        j.mutable_data()->set_test_fraction(std::numeric_limits<double>::quiet_NaN());
      },
      "test fraction");
  refused([](proto::JoinReply& j) { j.mutable_data()->add_share_count(3); },
          "partition share starts");
}

TEST(BatchFits, ABatchBeyondTheBudgetIsRefusedBeforeAllocating) {
  kernels::CpuBackend cpu(1);
  const auto model = BuildModel(LoadModelSpec("lenet5"), cpu);
  EXPECT_NO_THROW(CheckBatchFits(*model, 64, OptimizerConfig{}, 64 << 20));
  try {
    CheckBatchFits(*model, 1 << 24, OptimizerConfig{}, 0);  // ~240 GB: more than this machine has
    FAIL() << "a batch of 2^24 accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("more than the"), std::string::npos) << e.what();
  }
  EXPECT_THROW(CheckBatchFits(*model, 64, OptimizerConfig{}, 1 << 20),
               std::runtime_error);  // 1 MiB budget
}

}  // namespace
}  // namespace mt
