#include "core/trace/chrome_trace.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include "core/util/atomic_file.h"

namespace mt::trace {
namespace {

using nlohmann::json;

// A JSON string literal; names come from model files and command lines,
// so bytes that are not UTF-8 are replaced rather than refused.
std::string Quote(const std::string& s) {
  return json(s).dump(-1, ' ', false, json::error_handler_t::replace);
}

// What a span's index is, for its args; nullptr when it has none.
const char* IndexKey(SpanKind kind) {
  switch (kind) {
    case SpanKind::kForward:
    case SpanKind::kBackward: return "layer";
    case SpanKind::kReceive: return "worker";
    case SpanKind::kEncode:
    case SpanKind::kSend:
    case SpanKind::kReduce: return "segment";
    case SpanKind::kLocalStep: return "local_step";
    default: return nullptr;
  }
}

std::string IndexName(const Span& s, const std::map<int32_t, std::string>& names) {
  const auto it = names.find(s.index);
  return it != names.end() ? it->second : std::to_string(s.index);
}

void AppendMetadata(std::string& out, const char* what, int pid, int32_t tid,
                    const std::string& args) {
  char head[160];
  std::snprintf(head, sizeof head,
                "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%d,\"tid\":%" PRId32 ",\"args\":", what, pid,
                tid);
  out += head;
  out += args;
  out += "},\n";
}

void AppendSpan(std::string& out, const TraceProcess& p, const Span& s, int64_t origin) {
  out += "{\"name\":";
  out += Quote(SpanLabel(s, p.index_names));
  char fields[200];
  std::snprintf(fields, sizeof fields,
                ",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%" PRId64 ",\"dur\":%" PRId32
                ",\"pid\":%d,\"tid\":%" PRId32 ",\"args\":{",
                SpanCategory(s.kind), s.begin_us + p.shift_us - origin, s.dur_us, p.pid, s.track);
  out += fields;
  bool first = true;
  if (s.step >= 0) {
    out += "\"step\":" + std::to_string(s.step);
    first = false;
  }
  if (const char* key = IndexKey(s.kind); key && s.index >= 0) {
    out += first ? "\"" : ",\"";
    out += key;
    out += "\":";
    if (s.kind == SpanKind::kForward || s.kind == SpanKind::kBackward ||
        s.kind == SpanKind::kReceive)
      out += Quote(IndexName(s, p.index_names));
    else
      out += std::to_string(s.index);
  }
  out += "}},\n";
}

}  // namespace

std::string SpanLabel(const Span& s, const std::map<int32_t, std::string>& index_names) {
  std::string label = SpanName(s.kind);
  if (s.index < 0) return label;
  switch (s.kind) {
    case SpanKind::kForward:
    case SpanKind::kBackward:
    case SpanKind::kReceive: return label + " " + IndexName(s, index_names);
    case SpanKind::kLocalStep: return label + " " + std::to_string(s.index + 1);
    default: return label;
  }
}

std::string ChromeTraceJson(const std::vector<TraceProcess>& processes, const json& other) {
  int64_t origin = std::numeric_limits<int64_t>::max();
  size_t events = 0;
  for (const TraceProcess& p : processes) {
    for (const Span& s : p.spans) origin = std::min(origin, s.begin_us + p.shift_us);
    events += p.spans.size() + p.threads.size() + 2;
  }
  if (origin == std::numeric_limits<int64_t>::max()) origin = 0;
  std::string out;
  out.reserve(events * 160 + 256);
  out += "{\"traceEvents\":[\n";
  json meta = other.is_object() ? other : json::object();
  json& dropped = meta["dropped_spans"];
  dropped = json::object();
  for (const TraceProcess& p : processes) {
    AppendMetadata(out, "process_name", p.pid, 0, "{\"name\":" + Quote(p.name) + "}");
    AppendMetadata(out, "process_sort_index", p.pid, 0,
                   "{\"sort_index\":" + std::to_string(p.pid) + "}");
    // Per row by time, a parent before the spans inside it: the order
    // trace viewers nest complete events in.
    std::vector<Span> spans = p.spans;
    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
      if (a.track != b.track) return a.track < b.track;
      if (a.begin_us != b.begin_us) return a.begin_us < b.begin_us;
      return a.dur_us > b.dur_us;
    });
    // Only rows with spans are named: a named empty row is an empty track.
    for (const auto& [tid, name] : p.threads) {
      const auto used = std::lower_bound(spans.begin(), spans.end(), tid,
                                         [](const Span& s, int32_t t) { return s.track < t; });
      if (used != spans.end() && used->track == tid)
        AppendMetadata(out, "thread_name", p.pid, tid, "{\"name\":" + Quote(name) + "}");
    }
    for (const Span& s : spans) AppendSpan(out, p, s, origin);
    dropped[p.name] = p.dropped;
    if (!p.info.empty()) meta["processes"][p.name] = p.info;
  }
  // The list ends without a trailing comma: drop the last one.
  if (out.size() >= 2 && out.compare(out.size() - 2, 2, ",\n") == 0) out.erase(out.size() - 2, 1);
  meta["origin_us"] = origin;
  out += "],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":";
  out += meta.dump(-1, ' ', false, json::error_handler_t::replace);
  out += "}\n";
  return out;
}

void CheckTraceDirectory(const std::string& path, const std::string& flag) {
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (!dir.empty() && !std::filesystem::is_directory(dir))
    throw std::runtime_error(flag + " " + path + ": directory " + dir.string() + " does not exist");
}

void WriteChromeTrace(const std::string& path, const std::vector<TraceProcess>& processes,
                      const json& other) {
  WriteFileAtomically(path, ChromeTraceJson(processes, other));
}

}  // namespace mt::trace
