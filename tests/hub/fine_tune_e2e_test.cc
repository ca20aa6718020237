// Fine-tuning across real processes: mthub and three mtworkers on
// 127.0.0.1 train mobilenet-tiny fully, then only its head from a file's
// weights (--init-from, --train-only head_bn,fc). Only the parameters from
// the lowest trained layer up travel, so the bytes per step shrink by the
// trained share; the frozen layers come out bit for bit as they went in.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <set>

#include "core/model/model_spec.h"
#include "model_io/model_file.h"
#include "model_io/onnx_export.h"
#include "model_io/run_model.h"
#include "model_io/weights_fit.h"
#include "tests/support/cifar_writer.h"
#include "tests/support/cluster_processes.h"
#include "tests/support/files.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::ChildProcess;

// A hub and three workers training `extra` on `data` for 8 steps, every
// step synchronised; returns the hub's report (empty on failure).
json RunCluster(const fs::path& dir, const fs::path& data, std::vector<std::string> extra) {
  fs::create_directories(dir);
  std::vector<std::string> args = {"--workers",    "3",
                                   "--model",      "mobilenet-tiny",
                                   "--dataset",    data.string(),
                                   "--steps",      "8",
                                   "--sync-every", "1",
                                   "--compress",  // the bytes counted are floats, whatever the load
                                   "none",         "--global-batch",
                                   "48",           "--insecure",
                                   "--report",     (dir / "hub.json").string(),
                                   "--export",     (dir / "final.onnx").string()};
  args.insert(args.end(), extra.begin(), extra.end());
  std::unique_ptr<ChildProcess> hub;
  const int port = test_support::StartHub(hub, dir, args);
  if (port <= 0) return json::object();
  std::vector<std::unique_ptr<ChildProcess>> workers;
  for (int i = 0; i < 3; ++i)
    workers.push_back(test_support::StartWorker(dir, "w" + std::to_string(i), port,
                                                {"--insecure", "--threads", "1"}));
  for (auto& w : workers) EXPECT_EQ(w->Wait(180), 0) << w->Log();
  const int hub_exit = hub->Wait(60);
  EXPECT_EQ(hub_exit, 0) << hub->Log();
  if (hub_exit != 0) return json::object();
  return test_support::ReadJson(dir / "hub.json");
}

// Layer i's share [begin, end) of a buffer laid out by `offsets`.
std::pair<size_t, size_t> Span(const std::vector<size_t>& offsets, size_t total, size_t i) {
  return {offsets[i], i + 1 < offsets.size() ? offsets[i + 1] : total};
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b,
              std::pair<size_t, size_t> span) {
  return std::memcmp(a.data() + span.first, b.data() + span.first,
                     (span.second - span.first) * sizeof(float)) == 0;
}

TEST(FineTuneE2e, HeadOnlyRunSendsTheHeadsShareAndKeepsFrozenLayersBitForBit) {
  const fs::path dir = test_support::FreshTempDir("fine-tune-e2e");
  const fs::path data = dir / "cifar";
  test_support::WriteCifarDataset(data, 384, 64, 21);

  // Known starting weights, with batch norm statistics away from (0, 1) so
  // that keeping them is visible.
  const proto::ModelSpec spec = LoadModelSpec("mobilenet-tiny");
  const BuiltModel built = BuildOnCpu(spec);
  const Model& layout = *built.model;
  built.model->InitParams(1234);
  ModelWeights init = WeightsOf(*built.model);
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(0.2f, 1.5f);
  for (float& s : init.running_stats) s = u(rng);
  const fs::path init_file = dir / "init.onnx";
  ExportOnnx(spec, init, init_file.string());

  // The exchanged share: from head_bn (the lowest trained layer) up.
  size_t head_bn = 0;
  while (head_bn < layout.layers().size() && layout.layers()[head_bn]->name() != "head_bn")
    ++head_bn;
  ASSERT_LT(head_bn, layout.layers().size());
  const size_t total = layout.ParamCount(), exchanged = total - layout.ParamOffsets()[head_bn];
  EXPECT_EQ(total, 45386u);
  EXPECT_EQ(exchanged, 256u + 1290u);

  const json full = RunCluster(dir / "full", data, {});
  const json head = RunCluster(dir / "head", data,
                               {"--init-from", init_file.string(), "--train-only", "head_bn,fc"});
  ASSERT_FALSE(full.empty() || head.empty());
  EXPECT_EQ(full.value("steps", int64_t{0}), 8) << full.dump(2);
  EXPECT_EQ(head.value("steps", int64_t{0}), 8) << head.dump(2);
  const double full_bytes = full.value("gradient_bytes_per_step", 0.0);
  const double head_bytes = head.value("gradient_bytes_per_step", 0.0);
  ASSERT_GT(full_bytes, 0) << full.dump(2);
  const double share = static_cast<double>(exchanged) / static_cast<double>(total);
  EXPECT_NEAR(head_bytes / full_bytes, share, 0.2 * share)
      << "bytes per step: full " << full_bytes << ", head only " << head_bytes;
  // Bytes per step carry 3 workers' gradients in and 3 results out: 6 x 4 bytes a float.
  EXPECT_NEAR(full_bytes, 6.0 * 4 * static_cast<double>(total), 0.2 * 6 * 4 * total);
  std::printf("[ measured ] bytes per step: full %.0f, head_bn+fc %.0f (ratio %.4f, share %.4f)\n",
              full_bytes, head_bytes, head_bytes / full_bytes, share);

  // Layer by layer: frozen ones as in init.onnx, bit for bit (their batch
  // norm statistics too: the hub recalibrates only the layers that train);
  // the trained ones moved.
  const LoadedModel final_model = LoadModelFile((dir / "head" / "final.onnx").string());
  ASSERT_TRUE(final_model.weights.has_value());
  const ModelWeights& out = *final_model.weights;
  ASSERT_EQ(out.params.size(), total);
  ASSERT_EQ(out.running_stats.size(), init.running_stats.size());
  const std::set<std::string> trained = {"head_bn", "fc"};
  int frozen_checked = 0;
  for (size_t i = 0; i < layout.layers().size(); ++i) {
    const std::string& name = layout.layers()[i]->name();
    const auto p = Span(layout.ParamOffsets(), total, i);
    const auto s = Span(layout.RunningStatOffsets(), init.running_stats.size(), i);
    if (p.first == p.second && s.first == s.second) continue;
    if (trained.count(name)) {
      EXPECT_FALSE(SameBits(out.params, init.params, p)) << name << " trained but did not change";
      if (s.first != s.second) {
        EXPECT_FALSE(SameBits(out.running_stats, init.running_stats, s)) << name;
      }
    } else {
      ++frozen_checked;
      EXPECT_TRUE(SameBits(out.params, init.params, p)) << name << " is frozen but changed";
      EXPECT_TRUE(SameBits(out.running_stats, init.running_stats, s))
          << name << "'s running statistics changed though it is frozen";
    }
  }
  EXPECT_GT(frozen_checked, 30);
  if (!HasFailure()) fs::remove_all(dir);
}

}  // namespace
}  // namespace mt
