// Spans as Chrome's JSON trace format, which Perfetto (ui.perfetto.dev) and
// chrome://tracing open: {"traceEvents": [...], "displayTimeUnit": "ms",
// "otherData": {...}}. Each span is a complete event ("ph": "X", "ts" and
// "dur" in microseconds, integer "pid" and "tid"); metadata events ("ph":
// "M") name each process (a device: the hub, a worker) and each thread
// (a row), and order the processes. "otherData" says what was left out.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/trace/span.h"

namespace mt::trace {

struct TraceProcess {
  int pid = 1;
  std::string name;                        // the row's title: "mthub", the worker's name
  std::map<int32_t, std::string> threads;  // track -> name (named where it has spans)
  // What a span's index names, for kinds whose index is a layer or a
  // worker: "forward conv1", "receive w0".
  std::map<int32_t, std::string> index_names;
  std::vector<Span> spans;
  int64_t shift_us = 0;  // added to each span's begin: its clock onto the trace's
  int64_t dropped = 0;   // spans that did not fit, reported in otherData
  nlohmann::json info = nlohmann::json::object();  // more for otherData (clock offsets)
};

// A span's title: its kind, and what its index names ("forward conv1",
// "receive w0", "local step 3").
std::string SpanLabel(const Span& span, const std::map<int32_t, std::string>& index_names);

// The whole trace as JSON text. Times start at the earliest span (after
// shifting) so they read as time into the run; `other` is merged into
// "otherData" beside each process's dropped count and info.
std::string ChromeTraceJson(const std::vector<TraceProcess>& processes,
                            const nlohmann::json& other = nlohmann::json::object());

// Throws std::runtime_error, naming `flag`, when `path`'s directory does
// not exist: checked when a run starts, not when it ends an hour later.
void CheckTraceDirectory(const std::string& path, const std::string& flag = "--trace");

// Writes it atomically (core/util/atomic_file.h): a reader finds the old
// file or the whole new one, never part of one. Throws std::runtime_error
// naming the path.
void WriteChromeTrace(const std::string& path, const std::vector<TraceProcess>& processes,
                      const nlohmann::json& other = nlohmann::json::object());

}  // namespace mt::trace
