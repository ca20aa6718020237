// mthub --secure-aggregation on a hub and three workers in this process,
// over TLS on 127.0.0.1: every byte of every update the hub receives is
// masked (no floats, no encodings; the bytes pass a chi-square test for
// uniform), while the master weights follow plain aggregation within the
// fixed-point step (core/secagg/fixed_point.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tests/support/chi_square.h"
#include "tests/support/idx_writer.h"
#include "tests/support/in_process_cluster.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// What every worker sends the hub, as it leaves: each update chunk's masked
// bytes by worker, and the count of chunks that carried anything else.
struct Recorded {
  std::mutex mu;
  std::map<int, std::string> masked_bytes;  // by worker id
  int plain_chunks = 0;
};

class RecordingLink final : public HubLink {
 public:
  RecordingLink(HubLink& inner, int worker, Recorded& out)
      : inner_(inner), worker_(worker), out_(out) {}
  bool Send(const proto::WorkerMessage& m) override {
    if (m.has_gradient()) {
      const proto::GradientChunk& c = m.gradient();
      std::lock_guard<std::mutex> lock(out_.mu);
      out_.masked_bytes[worker_].append(reinterpret_cast<const char*>(c.masked().data()),
                                        c.masked_size() * sizeof(uint32_t));
      out_.plain_chunks += c.values_size() > 0 || !c.packed().empty() || c.masked_size() == 0;
    }
    return inner_.Send(m);
  }
  bool Read(proto::HubMessage* m) override { return inner_.Read(m); }
  void CloseSending() override { inner_.CloseSending(); }

 private:
  HubLink& inner_;
  int worker_;
  Recorded& out_;
};

TEST(SecureAggregation, TheHubReceivesOnlyUniformBytesAndStillAveragesExactly) {
  const fs::path dir = test_support::FreshTempDir("secagg");
  test_support::WriteIdxDataset(dir.string(), 3000, 300, 5);
  HubConfig hc;
  hc.max_steps = 6;
  hc.seed = 11;
  hc.local_sgd.sync_every = 1;  // a gradient per step: what inversion attacks feed on
  hc.batch_policy = BatchPolicy::kFixed;
  hc.global_batch = 192;  // not left to the devices' timings, which differ from run to run
  // The plain mean: auto's clipping would move plain aggregation, which the
  // secure run cannot do (every contribution there is the same average).
  hc.aggregate = Aggregation::kMean;
  // SGD: its step is the average times the rate, so the weights show the
  // average's error as it is. Adam (the default) divides each value by its
  // own size: a gradient below ~1e-7, where the fixed-point step (1.5e-8)
  // is a large part of it, takes a visibly different step there.
  hc.optimizer = OptimizerConfig{};
  hc.compression = Compression::kNone;
  hc.digest_every = 1;
  std::vector<float> plain, secure;
  const json plain_report = test_support::TrainInProcess(hc, dir, 3, &plain);
  ASSERT_EQ(plain_report["steps"], hc.max_steps);
  EXPECT_FALSE(plain_report["secure_aggregation"].get<bool>());

  hc.secure_aggregation = true;
  Recorded recorded;
  const json r = test_support::TrainInProcess(
      hc, dir, 3, &secure, nullptr,
      [&](HubLink& link, const proto::JoinReply& join) -> std::unique_ptr<HubLink> {
        EXPECT_TRUE(join.has_secure_aggregation());
        EXPECT_EQ(join.secure_aggregation().threshold(), 2);
        return std::make_unique<RecordingLink>(link, join.worker_id(), recorded);
      });
  ASSERT_EQ(r["steps"], hc.max_steps);
  EXPECT_TRUE(r["secure_aggregation"].get<bool>());
  EXPECT_EQ(r["secure_rounds"], hc.max_steps);
  EXPECT_EQ(r["secure_dropped_recovered"], 0);
  for (const json& w : r["workers"]) EXPECT_EQ(w["resyncs"], 0) << w["name"];

  // Every update chunk was masked; each worker's bytes look uniform (a
  // gradient's floats or fixed-point values fail this by far:
  // tests/core/secagg_primitives_test.cc).
  EXPECT_EQ(recorded.plain_chunks, 0);
  ASSERT_EQ(recorded.masked_bytes.size(), 3u);
  for (const auto& [worker, bytes] : recorded.masked_bytes) {
    EXPECT_EQ(bytes.size(), static_cast<size_t>(hc.max_steps) * plain.size() * sizeof(uint32_t))
        << worker;
    EXPECT_LT(test_support::ChiSquareOfBytes(bytes.data(), bytes.size()),
              test_support::kChiSquare255AtOneInAMillion)
        << "worker " << worker;
  }

  // The hub still took the plain run's steps: each step's average within a
  // few fixed-point steps (3 workers' rounding, 1.5e-8 each) of the plain
  // average, times the learning rate, over 6 steps.
  ASSERT_EQ(secure.size(), plain.size());
  double worst = 0;
  for (size_t i = 0; i < plain.size(); ++i)
    worst = std::max(worst, static_cast<double>(std::fabs(secure[i] - plain[i])));
  EXPECT_LE(worst, 1e-6) << "largest difference from plain aggregation";
  EXPECT_NEAR(r["test_accuracy"].get<double>(), plain_report["test_accuracy"].get<double>(), 0.01);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mt
