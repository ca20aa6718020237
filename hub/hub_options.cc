#include "hub/hub_options.h"

#include <CLI/CLI.hpp>

#include <numeric>

#include "core/cli/choice_option.h"
#include "core/cli/command_line.h"
#include "core/cli/common_options.h"
#include "core/cli/validators.h"
#include "hub/dp_flags.h"
#include "hub/policy/sync_period.h"
#include "tls/tls_flags.h"

namespace mt {
namespace {

using cli::Integer;
using cli::Real;
using cli::UsageError;

// What secure aggregation cannot go with: masking needs the dense ring
// encoding, and the hub sees only the sum, so it can neither weigh what it
// cannot see nor vote per worker.
void CheckSecureAggregation(const HubConfig& cfg) {
  const std::string sa = "--secure-aggregation";
  if (cfg.workers < 2)
    throw UsageError(sa +
                     " needs --workers 2 or more: the sum of one worker's update is that "
                     "update");
  if (cfg.compression && *cfg.compression != Compression::kNone)
    throw UsageError(sa + " masks every value in a dense ring: it cannot go with --compress " +
                     CompressionName(*cfg.compression) + " (give --compress none, or leave it)");
  if (cfg.aggregate == Aggregation::kTrimmedMean || cfg.aggregate == Aggregation::kMedian)
    throw UsageError(sa + ": the hub sees only the sum, so it cannot take a per-worker " +
                     (cfg.aggregate == Aggregation::kMedian ? "median" : "trimmed mean"));
  if (cfg.data.partition.kind != PartitionSpec::Kind::kIid && cfg.data.weight_by_share)
    throw UsageError(sa +
                     " with --partition weighs each worker by its batch: add "
                     "--weight-by-batch");
}

// Relations between flags; the Hub constructor would refuse most of these
// too, but only after loading the data, and as a runtime failure.
void CheckRelations(const CLI::App& app, const HubConfig& cfg) {
  const bool fixed_batches = app.count("--worker-batches") > 0;
  if (fixed_batches && app.count("--batch-policy") > 0 && cfg.batch_policy != BatchPolicy::kFixed)
    throw UsageError(
        std::string(
            "--worker-batches fixes each worker's batch; it cannot go with --batch-policy ") +
        BatchPolicyName(cfg.batch_policy));
  if (fixed_batches && static_cast<int>(cfg.worker_batches.size()) != cfg.workers)
    throw UsageError("--worker-batches gives " + std::to_string(cfg.worker_batches.size()) +
                     " sizes but --workers is " + std::to_string(cfg.workers) +
                     "; give one size per worker");
  if (fixed_batches && cfg.global_batch > 0) {
    const int64_t sum =
        std::accumulate(cfg.worker_batches.begin(), cfg.worker_batches.end(), int64_t{0});
    if (sum != cfg.global_batch)
      throw UsageError("--global-batch " + std::to_string(cfg.global_batch) +
                       " is not the sum of --worker-batches (" + std::to_string(sum) +
                       "), which sets the global batch; give one of them");
  }
  if (cfg.global_batch > 0 && cfg.global_batch < cfg.workers)
    throw UsageError("--global-batch " + std::to_string(cfg.global_batch) +
                     " is smaller than --workers " + std::to_string(cfg.workers) +
                     ": every worker needs at least one sample per step");
  if (cfg.max_workers > 0 && cfg.max_workers < cfg.workers)
    throw UsageError("--max-workers " + std::to_string(cfg.max_workers) + " is below --workers " +
                     std::to_string(cfg.workers));
  if (cfg.local_sgd.drift_correction && !cfg.local_sgd.plain_averaging())
    throw UsageError(
        "--drift-correction derives each worker's correction from the round's plain average; "
        "it cannot go with --outer-momentum or --outer-lr");
  if (cfg.min_workers > cfg.workers)
    throw UsageError("--min-workers " + std::to_string(cfg.min_workers) +
                     " cannot exceed --workers " + std::to_string(cfg.workers));
  if (cfg.secure_aggregation) CheckSecureAggregation(cfg);
}

}  // namespace

std::optional<int> ParseHubOptions(int argc, const char* const* argv, HubOptions& options) {
  HubConfig& cfg = options.config;
  CLI::App app(
      "mthub coordinates synchronous data-parallel training: workers (mtworker --hub) join, "
      "compute gradients on their shares of each step's batch, and the hub averages them.",
      "mthub");
  cli::Configure(app,
                 "mthub --workers N [--port 50051] [--model lenet5|FILE] [--dataset NAME|DIR] ...");

  cli::Section(app, "Cluster");
  app.add_option("--workers", cfg.workers, "workers to wait for before training starts")
      ->transform(Integer(1, 4096));
  app.add_option("--min-workers", cfg.min_workers,
                 "below this many workers the hub waits instead of training on")
      ->transform(Integer(1, 4096));
  app.add_option("--max-workers", cfg.max_workers,
                 "refuse joins beyond this many workers in the run at once")
      ->transform(Integer(1, 65536))
      ->default_str("twice --workers, at least 64");
  app.add_option("--bind", cfg.bind, "address to listen on")->type_name("ADDRESS");
  app.add_option("--port", cfg.port, "port to listen on (0: any free port)")
      ->transform(Integer(0, 65535));
  app.add_option("--port-file", options.port_file,
                 "write the port actually bound here once listening (with --port 0)")
      ->type_name("FILE");
  // The struct's default is 0 (no dashboard, for hubs in tests); mthub's is 8080.
  cfg.http.port = 8080;
  app.add_option("--http-port", cfg.http.port,
                 "serve the live dashboard (/), Prometheus metrics (/metrics) and the same as JSON "
                 "(/api/status) on this port of --http-bind, over HTTPS with the hub's TLS "
                 "certificate, read-only, behind the token if the hub has one (0: off; if the "
                 "default port is taken the hub warns and runs without it, a port named here must "
                 "be free)")
      ->transform(Integer(0, 65535));
  app.add_option("--http-bind", cfg.http.bind,
                 "address the dashboard listens on (default 127.0.0.1: this machine only; "
                 "0.0.0.0 for every interface)")
      ->type_name("ADDRESS");
  app.add_flag("--http-plain", cfg.http.plain,
               "serve the dashboard over plain HTTP instead of HTTPS (as it is under --insecure): "
               "the token travels in clear");
  app.add_option("--linger", options.linger,
                 "after the run, keep serving its final state on the dashboard for SECONDS, or "
                 "until SIGINT/SIGTERM with 'forever', before exiting")
      ->type_name("SECONDS|forever")
      ->transform(cli::IntegerOr("forever", -1, 0, 1 << 30))
      ->default_str("0");
  app.add_option("--serve-report", options.serve_report,
                 "train nothing: show a finished run's --report FILE as the dashboard (on "
                 "--http-port, --http-bind) until SIGINT/SIGTERM")
      ->type_name("FILE");

  cli::Section(app, "Security");
  cli::TokenSources token;
  cli::AddToken(app, token, "shared secret workers must present");
  tls::AddServerFlags(app, cfg.tls);

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

  cli::Section(app, "Hostile workers");
  cli::AddChoice(app, "--aggregate", cfg.aggregate,
                 {{"auto", Aggregation::kAuto},
                  {"mean", Aggregation::kMean},
                  {"trimmed-mean", Aggregation::kTrimmedMean},
                  {"median", Aggregation::kMedian}},
                 "how the workers' gradients (or weight changes) are combined, segment by "
                 "segment: auto (each worker's norm clipped to --clip-factor times the step's "
                 "median; from 3 workers on, centred clipping around the coordinate-wise median, "
                 "the batch-weighted mean while nobody strays, and a worker whose contributions "
                 "keep pointing against the others', as a sign flip does, is dropped), mean "
                 "(exact, undefended), trimmed-mean or median (coordinate-wise, one vote per "
                 "worker). Whatever the choice, from 3 workers on a contribution over 100 times "
                 "the median norm is refused and its worker dropped; 2 workers cannot be told "
                 "apart (docs/security.md)");
  app.add_option("--clip-factor", cfg.clip_factor,
                 "--aggregate auto: clipping radius as a multiple of the step's median norm "
                 "and median distance to the centre")
      ->check(Real(1, 1e6));

  AddDpFlags(app, cfg.dp);
  cli::Section(app, "Privacy");
  app.add_flag("--secure-aggregation", cfg.secure_aggregation,
               "the hub learns only the sum of the workers' updates, never one worker's: each "
               "masks its update with pairwise masks that cancel in the sum (X25519, ChaCha20; a "
               "worker that drops mid-round is unmasked from its secret shares, held by the "
               "others, a majority of --workers needed). Updates travel dense (--compress auto "
               "becomes none; other encodings are refused); the per-worker defences of --aggregate "
               "cannot see masked updates and are off (trimmed-mean and median are refused); "
               "each value is clipped to +-16 by its worker; the end-of-run model check "
               "remains (docs/security.md)");

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

  cli::Section(app, "Model, data and training");
  cli::AddModelAndDataset(app, cfg.model, cfg.dataset, " (the same path on every worker)");
  cli::AddDataOptions(app, cfg.data, /*training=*/true);
  app.add_option_function<std::string>(
         "--partition",
         [&cfg](const std::string& text) { cfg.data.partition = ParsePartition(text); },
         "how the training set is split among the workers, SPEC being iid (one shared "
         "shuffle), or each worker its own samples as phones hold them: dirichlet:ALPHA (each "
         "class split by "
         "Dirichlet(ALPHA) proportions; 0.1 is very skewed), classes:K (K classes each); worker "
         "id k takes share k mod --workers, the report's partition_histograms")
      ->check(cli::ParsedBy([](const std::string& text) { ParsePartition(text); }))
      // Not "iid|dirichlet:ALPHA|...": the help formatter splits type names at ':'.
      ->type_name("SPEC")
      ->default_str("iid");
  app.add_flag("!--weight-by-batch", cfg.data.weight_by_share,
               "with --partition: average the workers' contributions by their batches' samples, "
               "not by the samples of their shares (the default, which keeps the average the "
               "whole set's gradient when shares differ in size)");
  cli::AddRunLength(app, cfg.epochs, cfg.max_steps);
  cli::AddFineTuning(app, cfg.tuning, cfg.export_path);
  cli::AddEvaluation(app, cfg.eval_every, cfg.patience, cfg.target_accuracy);
  cli::AddSeed(app, cfg.seed, "initial weights and shuffles");
  cli::AddOptimizer(app, cfg.optimizer);

  cli::Section(app, "Checkpoints");
  app.add_option(
         "--checkpoint-dir", cfg.checkpoint_dir,
         "directory for checkpoints (every --checkpoint-every steps, epoch ends and shutdown)")
      ->type_name("DIR");
  app.add_option("--checkpoint-every", cfg.checkpoint_every,
                 "checkpoint every N steps (0: epoch ends and shutdown only)")
      ->transform(Integer(0));
  std::string resume_dir;
  app.add_option(
         "--resume", resume_dir,
         "continue from the newest checkpoint in DIR (and keep checkpointing there); starts afresh "
         "if there is none yet; --checkpoint-dir, if given too, must name the same directory")
      ->type_name("DIR");

  cli::Section(app, "Process");
  cli::AddThreads(app, cfg.threads, "hub compute threads (averaging, optimizer, evaluation)");
  cli::AddReport(app, cfg.report_path);
  app.add_option("--events", cfg.events_path,
                 "write the run's events here as JSON lines, as they happen (workers joining, left "
                 "out, back, dropped, leaving; progress as logged, epochs, checkpoints, the end)")
      ->type_name("FILE");
  app.add_option("--trace", cfg.trace_path,
                 "write one timeline of the run here when it ends, as a Chrome trace (open it in "
                 "ui.perfetto.dev or chrome://tracing): a row per device on the hub's clock, the "
                 "hub's receive, barrier wait, reduce, optimizer, broadcast, evaluation and "
                 "checkpoints, and each worker's forward and backward per layer, encode, send and "
                 "wait (workers send their spans with their gradients; their clocks' offsets are "
                 "estimated from round trips)")
      ->type_name("FILE");
  cli::AddLogEvery(app, cfg.log_every_seconds);
  cli::AddLogLevel(app, options.log_level);
  cli::AddVersionAndHelp(app, "mthub");

  return cli::Parse(app, argc, argv, [&] {
    CheckRelations(app, cfg);
    CheckDpFlags(app, cfg);
    if (cfg.secure_aggregation) cfg.compression = Compression::kNone;
    cli::ApplyDefaultLearningRate(app, cfg.optimizer, cfg.global_batch_or_default());
    cfg.http.port_explicit = app.count("--http-port") > 0;
    tls::CheckServerFlags(cfg.tls);
    if (!resume_dir.empty()) {
      if (!cfg.checkpoint_dir.empty() && cfg.checkpoint_dir != resume_dir)
        throw UsageError("--resume " + resume_dir + " and --checkpoint-dir " + cfg.checkpoint_dir +
                         " differ; give one directory");
      cfg.checkpoint_dir = resume_dir;
      cfg.resume = true;
      if (!cfg.tuning.init_from.empty())
        throw UsageError(
            "--resume and --init-from: --resume continues a run, --init-from "
            "starts a new one from a model's weights; give one");
    }
    cfg.token = cli::ResolveToken(token);
    cli::ApplyLogLevel(options.log_level);
    cli::WarnIfMoreThreadsThanCores(cfg.threads);
  });
}

}  // namespace mt
