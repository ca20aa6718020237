// The hub's --report: the shared run summary (core/train/run_summary.h)
// plus what only the hub knows: its own costs, the wire, each worker (the
// run and the workers written as /api/status writes them).
#include "hub/hub_report.h"

#include <spdlog/spdlog.h>

#include "core/compress/gradient_codec.h"
#include "core/compress/segment_codec.h"
#include "core/model/model.h"
#include "core/secagg/fixed_point.h"
#include "core/secagg/round_types.h"
#include "core/train/run_summary.h"
#include "hub/hub.h"
#include "hub/monitor/live_status.h"
#include "hub/monitor/run_json.h"
#include "hub/monitor/status_source.h"

namespace mt {

void ReportRun(const StatusSnapshot& s, RunSummary& r) {
  r.model = s.run.model;
  r.dataset = s.run.dataset;
  r.parameters = s.run.parameters;
  const ReportJson run = RunJson(s.run);  // named: items() does not keep a temporary alive
  for (const auto& [key, value] : run.items()) r.details[key] = value;
  // In use at the end, under the names /api/status gives them in use now;
  // final_* as the report named them before (scripts read them).
  r.details["sync_every_in_use"] = s.sync_every;
  r.details["compression_in_use"] = s.compression;
  r.details["final_sync_every"] = s.sync_every;
  r.details["final_compression"] = s.compression;
  if (s.privacy) r.details["differential_privacy"] = PrivacyJson(*s.privacy);
}

void ReportWorkers(const StatusSnapshot& s, ReportJson& details) {
  ReportJson workers = ReportJson::array();
  for (const WorkerRow& w : s.workers) workers.push_back(WorkerJson(w));
  details["workers"] = std::move(workers);
  details["joins_without_stream"] = s.joins_without_stream;
  details["departed_workers"] = {{"workers", s.departed.workers},
                                 {"said_leave", s.departed.said_leave},
                                 {"not_listed", s.departed.unlisted},
                                 {"samples", s.departed.samples}};
}

// Where an exchange's bytes go: each trained layer's share of one message
// (a worker's change, or the average sent back), at every encoding. The
// codecs' blocks run across layer boundaries, so a layer's figure is its
// values encoded alone: exact for none and fp16, within a block's few
// bytes for int8 and topk.
ReportJson ExchangeBytesPerLayer(const Model& model, size_t exchanged_begin) {
  ReportJson layers = ReportJson::array();
  const std::vector<ParamMatrix> matrices = model.ParamMatrices();
  for (size_t i = 0; i < model.layers().size(); ++i) {
    const Layer& layer = *model.layers()[i];
    const size_t values = layer.ParamCount(), at = model.ParamOffsets()[i];
    if (values == 0 || at < exchanged_begin) continue;
    const SegmentCodec alone(at, at + values, matrices);
    ReportJson bytes = ReportJson::object();
    for (Compression c : {Compression::kNone, Compression::kFp16, Compression::kInt8,
                          Compression::kTopK, Compression::kLowRank})
      bytes[CompressionName(c)] = alone.Bytes(c);
    ReportJson row = {{"layer", layer.name()}, {"values", values}, {"bytes", std::move(bytes)}};
    // The rank each of its matrices travels at under lowrank.
    ReportJson ranks = ReportJson::array();
    for (const SegmentCodec::Factored& f : alone.factored())
      ranks.push_back({{"rows", f.rows}, {"cols", f.cols}, {"rank", f.rank}});
    if (!ranks.empty()) row["lowrank"] = std::move(ranks);
    layers.push_back(std::move(row));
  }
  return layers;
}

void Hub::WriteReport() {
  if (config_.report_path.empty()) return;
  const RunMetrics& m = metrics_;
  const int64_t steps = coordinator_->steps_done();
  const double write_cpu = static_cast<double>(m.write_cpu_ns.load()) * 1e-9;
  // The workers and the run as /api/status shows them, from the same data.
  const StatusSnapshot live = TakeSnapshot(*coordinator_, *live_);
  RunSummary r;
  r.mode = "hub";
  ReportRun(live, r);
  r.device = "cpu";
  r.threads = config_.threads;
  r.optimizer = master_->optimizer().Kind();
  r.lr = master_->optimizer().config().lr;
  r.seed = config_.seed;
  r.resumed_from_step = record_.resumed_from;
  // The global batch the run was planned with before it followed the devices.
  if (record_.default_batch > 0) r.details["global_batch_default"] = record_.default_batch;
  r.details["model_warnings"] = record_.model_warnings;
  r.details["class_names"] = record_.class_names;
  r.details["skipped_images"] = record_.skipped_images;
  r.details["augment"] = record_.augment;
  r.details["partition"] = config_.data.partition.ToString();
  // Per share (worker id modulo the shares): its samples of each class.
  if (!record_.partition_counts.empty())
    r.details["partition_histograms"] = record_.partition_counts;
  loop_->FillSummary(r);
  const double train_seconds = r.train_seconds;
  ReportJson& d = r.details;
  d["batch_policy"] = BatchPolicyName(coordinator_->batch_policy());
  d["tls_fingerprint"] = record_.tls_fingerprint;  // "": plaintext (--insecure)
  if (config_.local_sgd.outer_momentum > 0) d["outer_momentum"] = config_.local_sgd.outer_momentum;
  if (config_.local_sgd.outer_lr != 1) d["outer_lr"] = config_.local_sgd.outer_lr;
  d["overlap_rounds"] = config_.local_sgd.rounds_overlap();
  d["drift_correction"] = config_.local_sgd.drift_correction;
  // Each change --sync-every auto made, with the estimates it decided on.
  ReportJson sync_changes = ReportJson::array();
  for (const SyncChange& c : m.sync_changes)
    sync_changes.push_back({{"step", c.step},
                            {"from", c.from},
                            {"to", c.to},
                            {"exchange_ms", c.exchange_ms},
                            {"step_compute_ms", c.step_compute_ms}});
  d["sync_changes"] = std::move(sync_changes);
  // And each change --compress auto made.
  ReportJson compression_changes = ReportJson::array();
  for (const CompressionChange& c : m.compression_changes)
    compression_changes.push_back({{"step", c.step},
                                   {"from", CompressionName(c.from)},
                                   {"to", CompressionName(c.to)},
                                   {"exchange_ms", c.exchange_ms},
                                   {"budget_ms", c.budget_ms}});
  d["compression_changes"] = std::move(compression_changes);
  d["hub_reduce_seconds"] = m.reduce_seconds;
  d["hub_broadcast_seconds"] = m.broadcast_seconds + write_cpu;
  // CPU seconds of the hub's own work (averaging, optimizer, broadcast
  // including the writer threads) over the run's wall time.
  d["hub_share"] = train_seconds > 0
                       ? (m.reduce_seconds + m.broadcast_seconds + write_cpu) / train_seconds
                       : 0.0;
  // The same work in wall time of the step loop: inflated when workers
  // share the hub's cores, as on one machine.
  d["hub_wall_share"] = train_seconds > 0 ? m.wall_seconds / train_seconds : 0.0;
  // All the hub process's CPU during the step loop, evaluation excluded:
  // adds receiving and parsing the workers' gradients and the transport's
  // own threads to the above.
  d["hub_process_share"] = train_seconds > 0 ? m.process_seconds / train_seconds : 0.0;
  d["aggregate"] = AggregationName(config_.aggregate);
  // What the hub could see of each worker's update: with secure
  // aggregation nothing but the sum, so --aggregate's per-worker defences
  // had nothing to compare (docs/security.md).
  d["secure_aggregation"] = config_.secure_aggregation;
  if (config_.secure_aggregation) {
    d["secure_aggregation_threshold"] = secagg::DefaultThreshold(config_.workers);
    d["secure_aggregation_clip"] = secagg::FixedPoint().clip;
    d["secure_rounds"] = m.secure_rounds;
    d["secure_dropped_recovered"] = m.secure_dropped_recovered;
    d["per_worker_defences"] = "off: masked updates cannot be inspected";
  }
  d["clip_factor"] = config_.clip_factor;
  d["refused_contributions"] = m.refused_contributions;
  d["steps_refused"] = m.steps_refused;
  d["refused_rejoins"] = m.refused_rejoins;
  d["set_asides"] = m.set_asides;
  d["batch_change_count"] = m.batch_change_count;
  d["gradient_bytes_in"] = m.gradient_bytes_in;
  d["result_bytes_out"] = m.result_bytes_out.load();
  const int64_t trained_here = steps - std::max<int64_t>(0, record_.resumed_from);
  d["gradient_bytes_per_step"] =
      trained_here > 0 ? static_cast<double>(m.gradient_bytes_in + m.result_bytes_out.load()) /
                             static_cast<double>(trained_here)
                       : 0.0;
  d["exchange_bytes_per_layer"] =
      ExchangeBytesPerLayer(master_->model(), master_->exchanged_begin());
  ReportWorkers(live, d);
  ReportJson changes = ReportJson::array();
  for (const auto& c : m.batch_changes) {
    ReportJson batches = ReportJson::object();
    for (const auto& [name, b] : c.batches) batches[name] = b;
    changes.push_back({{"step", c.step}, {"batches", std::move(batches)}});
  }
  d["batch_changes"] = std::move(changes);
  // Loss, step time, rate, bytes and batches over the run, downsampled
  // (core/train/step_history.h): the dashboard's series.
  d["history"] = live_->HistoryJson();
  try {
    r.Write(config_.report_path);
  } catch (const std::exception& e) {
    spdlog::error("cannot write the report: {}", e.what());
  }
}

}  // namespace mt
