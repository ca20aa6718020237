#include "hub/report/hub_trace.h"

#include <spdlog/spdlog.h>

#include <exception>
#include <set>

#include "core/trace/chrome_trace.h"
#include "proto/wire.h"
#include "wire/trace_wire.h"

namespace mt {
namespace {

constexpr int kHubPid = 1;

}  // namespace

HubTrace::HubTrace(std::string path, std::vector<std::string> layer_names)
    : path_(std::move(path)),
      layer_names_(std::move(layer_names)),
      hub_(kHubSpans, trace::kTrackStep) {
  trace::CheckTraceDirectory(path_);
}

HubTrace::~HubTrace() {
  try {
    Write();       // unless the run did
  } catch (...) {  // Write logs its own failures; nothing may leave a destructor
  }
}

HubTrace::WorkerRow* HubTrace::Row(int worker_id) {
  if (worker_id < 0 || static_cast<size_t>(worker_id) >= rows_.size()) return nullptr;
  return rows_[static_cast<size_t>(worker_id)].get();
}

void HubTrace::OnJoin(int worker_id, const std::string& name) {
  if (worker_id < 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (static_cast<size_t>(worker_id) >= rows_.size())
    rows_.resize(static_cast<size_t>(worker_id) + 1);
  auto row = std::make_unique<WorkerRow>();
  row->id = worker_id;
  row->name = name;
  rows_[static_cast<size_t>(worker_id)] = std::move(row);
}

std::string HubTrace::Check(const proto::GradientChunk& chunk) {
  if (!chunk.has_trace()) return "";
  if (!chunk.last()) return "trace spans on a chunk that is not the gradient's last";
  return trace::CheckSpans(chunk.trace(), wire::kMaxTraceSpans);
}

void HubTrace::OnChunk(int worker_id, const proto::GradientChunk& chunk, bool first,
                       int64_t now_us) {
  std::lock_guard<std::mutex> lock(mu_);
  WorkerRow* row = Row(worker_id);
  if (!row) return;
  if (first) row->receive_begin_us = now_us;
  if (!chunk.last()) return;
  trace::Span receive = trace::MakeSpan(trace::SpanKind::kReceive, row->receive_begin_us, now_us,
                                        worker_id, chunk.step());
  receive.track = trace::kTrackReceiveBase + worker_id;
  hub_.Add(receive);
  if (!chunk.has_trace()) return;
  const proto::TraceSpans& batch = chunk.trace();
  row->clock.Add(trace::SampleOf(batch, now_us));
  row->dropped_by_worker += batch.dropped();
  ++row->batches;
  row->bytes += static_cast<int64_t>(batch.ByteSizeLong());
  // The worker's first spans: its buffer is allocated now, not at Join.
  if (!row->spans) row->spans = std::make_unique<trace::TraceRecorder>(kWorkerSpans);
  trace::ForEachSpan(batch, chunk.step(), [&](const trace::Span& s) { row->spans->Add(s); });
}

void HubTrace::Write() {
  if (written_.exchange(true)) return;
  std::vector<trace::TraceProcess> processes;
  nlohmann::json other;
  {
    std::lock_guard<std::mutex> lock(mu_);
    trace::TraceProcess hub;
    hub.pid = kHubPid;
    hub.name = "mthub";
    hub.threads[trace::kTrackRun] = "run";
    hub.threads[trace::kTrackStep] = "step";
    hub.spans = hub_.Spans();
    hub.dropped = hub_.dropped();
    std::set<std::string> names{hub.name};
    std::vector<trace::TraceProcess> workers;
    for (const auto& row : rows_) {
      if (!row) continue;
      hub.index_names[row->id] = row->name;
      hub.threads[trace::kTrackReceiveBase + row->id] = "receive " + row->name;
      if (!row->spans) continue;  // joined, never traced a step
      trace::TraceProcess w;
      w.pid = kHubPid + 1 + row->id;
      // A worker that joins again gets a new id: a row of its own.
      w.name = names.insert(row->name).second
                   ? row->name
                   : row->name + " (worker " + std::to_string(row->id) + ")";
      w.threads[trace::kTrackCompute] = "compute";
      w.threads[trace::kTrackLookahead] = "steps ahead";
      for (size_t i = 0; i < layer_names_.size(); ++i)
        w.index_names[static_cast<int32_t>(i)] = layer_names_[i];
      w.spans = row->spans->Spans();
      w.shift_us = -row->clock.offset_us();
      w.dropped = row->spans->dropped() + row->dropped_by_worker;
      w.info = {{"worker_id", row->id},
                {"clock_offset_us", row->clock.offset_us()},
                {"clock_round_trip_us", row->clock.round_trip_us()},
                {"clock_samples", row->clock.samples()},
                {"dropped_by_worker", row->dropped_by_worker},
                {"trace_batches", row->batches},
                {"trace_bytes", row->bytes}};
      workers.push_back(std::move(w));
    }
    processes.push_back(std::move(hub));
    for (auto& w : workers) processes.push_back(std::move(w));
  }
  other["clock"] =
      "the hub's steady clock; each worker's spans shifted by its estimated offset (worker "
      "minus hub, from the round trip with the smallest delay: off by at most half of it)";
  try {
    trace::WriteChromeTrace(path_, processes, other);
    spdlog::info("trace: {} ({} processes)", path_, processes.size());
  } catch (const std::exception& e) {
    spdlog::error("could not write the trace: {}", e.what());
  }
}

}  // namespace mt
