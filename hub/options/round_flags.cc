#include "hub/options/hub_flag_sections.h"

#include <CLI/CLI.hpp>

#include "core/cli/choice_option.h"
#include "core/cli/command_line.h"
#include "core/cli/common_options.h"
#include "core/cli/validators.h"
#include "hub/policy/sync_period.h"

namespace mt {

using cli::Integer;
using cli::Real;

void AddBatchFlags(CLI::App& app, HubConfig& cfg) {
  cli::Section(app, "Batches");
  app.add_option("--global-batch", cfg.global_batch,
                 "samples per step over all workers (0: 64 per worker, or 64 for the fastest "
                 "and what each other computes meanwhile where a device is markedly slower)")
      ->transform(Integer(0, 1 << 24));
  app.add_option("--worker-batches", cfg.worker_batches,
                 "fixed batch per worker in join order, e.g. 16,32,16 (implies --batch-policy "
                 "fixed; sets the global batch)")
      ->delimiter(',')
      ->trigger_on_parse()  // given twice, the last list counts, as for every other flag
      ->transform(Integer(1, 1 << 20));
  cli::AddChoice(app, "--batch-policy", cfg.batch_policy,
                 {{"fixed", BatchPolicy::kFixed}, {"balanced", BatchPolicy::kBalanced}},
                 "how the global batch is split: balanced (by each worker's measured speed, so all "
                 "finish together) or fixed (equal shares)");
}

void AddStepFlags(CLI::App& app, HubConfig& cfg) {
  cli::Section(app, "Steps and stragglers");
  app.add_option("--step-deadline", cfg.deadline.fixed_seconds,
                 "seconds a step waits for a worker before going on without it (a round of "
                 "--sync-every H steps: H times as long; 0: adaptive, "
                 "--deadline-factor times the recent step time, at least --deadline-floor)")
      ->check(Real(0, 1e6));
  app.add_option("--deadline-factor", cfg.deadline.factor,
                 "adaptive deadline: multiple of the recent step time")
      ->check(Real(1, 1e6));
  app.add_option("--deadline-floor", cfg.deadline.floor_seconds,
                 "adaptive deadline: never shorter than this (seconds)")
      ->check(Real(0.01, 1e6));
  // --compression: the name the report, /api/status and the dashboard give it.
  cli::AddChoice(app, "--compress,--compression", cfg.compression,
                 {{"auto", std::nullopt},
                  {"none", Compression::kNone},
                  {"fp16", Compression::kFp16},
                  {"int8", Compression::kInt8},
                  {"topk", Compression::kTopK},
                  {"lowrank", Compression::kLowRank}},
                 "how rounds encode what they exchange, both directions: none, fp16, int8 (a "
                 "scale per 256 values), topk (the largest 32 of every 256 values, int8: ~1/15 "
                 "of none), lowrank (weight matrices as rank-4 factors in fp16, the rest int8: "
                 "~1/30 of none for LeNet-5), or auto: none on a fast network, stronger encodings "
                 "as the measured "
                 "exchange grows against the compute; the lossy ones carry what they drop into "
                 "later messages (error feedback)");
  app.add_option("--compress-warmup", cfg.compression_warmup_steps,
                 "steps at the start of the run that exchange in fp16 at most, whatever "
                 "--compress says (compressing from the first step costs accuracy that later "
                 "steps do not win back)")
      ->transform(Integer(0, 1 << 30));
  app.add_option("--sync-every", cfg.local_sgd.sync_every,
                 "local SGD: each worker takes H optimizer steps on its own batches between "
                 "exchanges and sends the change of its weights; the hub averages the changes. "
                 "1: exchange every step, the exact synchronous mode; auto: 1 while an exchange "
                 "is quick (under 20 ms, as on a LAN), else H from 1 to 64 so exchanges take "
                 "about 5% of the time (with --optimizer adam at most 4: longer rounds of Adam "
                 "cost samples); every change is logged and reported")
      ->type_name("H|auto")
      ->transform(cli::IntegerOr("auto", 0, 1, SyncPeriod::kMax))
      ->default_str("auto");
  app.add_option("--outer-momentum", cfg.local_sgd.outer_momentum,
                 "local SGD: momentum of the hub's update with the averaged change (as in "
                 "DiLoCo; 0: plain averaging)")
      ->check(Real(0, 0.99));
  app.add_option("--outer-lr", cfg.local_sgd.outer_lr,
                 "local SGD: learning rate of the hub's update with the averaged change (1: "
                 "plain averaging)")
      ->check(Real(0.01, 10));
  app.add_flag("--overlap", cfg.local_sgd.overlap_rounds,
               "local SGD: workers go on with the next round while a round's average travels "
               "(hides the exchange; the steps taken ahead work on stale weights: about a point "
               "of accuracy after an epoch over Wi-Fi, for a few percent of speed)");
  app.add_option("--prox", cfg.local_sgd.prox_mu,
                 "local SGD: FedProx's mu; each local step is also pulled towards the round's "
                 "starting weights by mu times the distance, which keeps workers whose data "
                 "differ from drifting apart (0: none)")
      ->check(Real(0, 100));
  app.add_flag("--drift-correction,!--no-drift-correction", cfg.local_sgd.drift_correction,
               "local SGD: each worker corrects its local steps for how far its own data pulls "
               "it from the group (SCAFFOLD's control variates, derived from each round's "
               "average: no extra bytes). Off by default: measured on LeNet-5 with Dirichlet "
               "0.1 shares at H 4 it cost accuracy with Adam and with SGD "
               "(docs/benchmarks.md)");
  app.add_option("--digest-every", cfg.digest_every, "workers send a weight digest every N steps")
      ->transform(Integer(1, 1 << 20));
}

}  // namespace mt
