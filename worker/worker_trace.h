// A worker's spans (core/trace/): forward and backward per layer, loss,
// optimizer, encode, send, wait for the result, local steps. They go to
// this worker's own --trace file (on its own clock, written when it ends,
// or when it is destroyed after an error) and, when the hub asked at Join
// (JoinReply.trace), with the last chunk of each gradient to the hub
// (GradientChunk.trace, at most wire::kMaxTraceSpans a gradient; the rest
// are counted, not sent), together with the stamps of the plan it answers
// for the hub's clock-offset estimate.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/trace/span.h"
#include "core/trace/trace_recorder.h"
#include "hub.pb.h"

namespace mt {

class WorkerTrace final : public trace::SpanSink {
 public:
  // `path`: this worker's own trace file ("": none); `process_name`: its
  // row's title. Throws std::runtime_error when `path`'s directory does not
  // exist, before anything trains.
  WorkerTrace(std::string path, std::string process_name);
  // Writes the own file unless Write() did; never throws.
  ~WorkerTrace();
  WorkerTrace(const WorkerTrace&) = delete;
  WorkerTrace& operator=(const WorkerTrace&) = delete;

  // Whether the hub wants this session's spans; the batch buffer is
  // allocated the first time.
  void SetSending(bool on);
  bool sending() const { return sending_.load(std::memory_order_relaxed); }
  // Whether anything records: an own file, or a hub that asked.
  bool active() const { return file_ != nullptr || sending(); }
  // The model's layers name forward and backward spans in the own file.
  void NameLayers(const Model& model);
  // The step that spans recorded without one belong to.
  void SetStep(int64_t step) { step_.store(step, std::memory_order_relaxed); }

  // Thread-safe (the compute thread and the lookahead's); never allocates.
  void Add(const trace::Span& span) override;

  // A plan stamped `hub_time_us` by the hub arrived at `received_us`.
  void OnPlan(int64_t hub_time_us, int64_t received_us);
  // The spans since the last batch into `out` (on the chunk of `step`),
  // stamped as leaving now, and forgotten here. No allocation once `out`
  // has grown.
  void TakeBatch(int64_t step, proto::TraceSpans* out);

  // The own file, now (atomically), once: later calls do nothing. Logs
  // rather than throws on failure.
  void Write();

 private:
  const std::string path_;
  const std::string process_name_;
  std::unique_ptr<trace::TraceRecorder> file_;  // null without an own file
  std::atomic<int64_t> step_{-1};
  std::atomic<bool> sending_{false};
  std::mutex mu_;                     // guards what follows
  std::vector<trace::Span> pending_;  // reserved to wire::kMaxTraceSpans
  int64_t pending_dropped_ = 0;
  int64_t plan_hub_time_us_ = 0, plan_received_us_ = 0;
  std::vector<std::string> layer_names_;
  std::atomic<bool> written_{false};
};

}  // namespace mt
