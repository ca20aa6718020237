// mthub --trace FILE: one timeline of the run, the hub and every worker.
// The hub records its own spans (core/trace/) and, told to at Join
// (JoinReply.trace), each worker sends its spans with the last chunk of
// every gradient, with the clock stamps that estimate how far its clock is
// from the hub's (core/trace/clock_offset.h). The file shows a process row
// per device on the hub's clock: the hub's ("run": the run thread;
// "step": step work done on the transport's threads; "receive NAME": each
// worker's gradients arriving) and one per worker, named after it.
//
// Bounded: the hub keeps kHubSpans of its own and kWorkerSpans per worker
// (allocated with the worker's first spans, so joins that never train cost
// nothing), the first ones of the run; what did not fit is counted in the
// file's otherData. Written atomically when the run ends, and by the
// destructor when it ends on an error, so a stopped or failed run leaves
// its partial trace and never a half-written file.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/trace/clock_offset.h"
#include "core/trace/span.h"
#include "core/trace/trace_recorder.h"
#include "hub.pb.h"

namespace mt {

class HubTrace {
 public:
  static constexpr size_t kHubSpans = trace::TraceRecorder::kDefaultCapacity;
  static constexpr size_t kWorkerSpans = size_t{1} << 16;  // 2 MiB each

  // `layer_names`: the model's layers in order, naming the workers'
  // forward and backward spans. Throws std::runtime_error when `path`'s
  // directory does not exist, so a run does not train for an hour and
  // then fail to keep its trace.
  HubTrace(std::string path, std::vector<std::string> layer_names);
  // Writes the trace unless Write() did; never throws.
  ~HubTrace();
  HubTrace(const HubTrace&) = delete;
  HubTrace& operator=(const HubTrace&) = delete;

  // The hub's own spans.
  trace::SpanSink* hub() { return &hub_; }

  // A worker joined (a row of its own, named `name`).
  void OnJoin(int worker_id, const std::string& name);
  // "" when `chunk`'s spans are acceptable (or it has none), else why not;
  // checked before the chunk is taken.
  static std::string Check(const proto::GradientChunk& chunk);
  // A chunk of worker_id's gradient was taken at hub time `now_us`: the
  // first of a step begins its receive span, the last ends it and brings
  // the worker's spans of that step.
  void OnChunk(int worker_id, const proto::GradientChunk& chunk, bool first, int64_t now_us);

  // Writes the file now (atomically), once: later calls do nothing. Logs
  // rather than throws on failure.
  void Write();
  const std::string& path() const { return path_; }

 private:
  struct WorkerRow {
    int id = 0;
    std::string name;
    std::unique_ptr<trace::TraceRecorder> spans;  // from its first batch, on its clock
    trace::ClockOffset clock;
    int64_t receive_begin_us = 0;
    int64_t dropped_by_worker = 0;   // over the per-gradient cap, never sent
    int64_t batches = 0, bytes = 0;  // what its spans cost on the wire
  };
  WorkerRow* Row(int worker_id);

  const std::string path_;
  const std::vector<std::string> layer_names_;
  trace::TraceRecorder hub_;
  std::mutex mu_;                                 // guards rows_
  std::vector<std::unique_ptr<WorkerRow>> rows_;  // index: worker id
  std::atomic<bool> written_{false};
};

}  // namespace mt
