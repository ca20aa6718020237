// A run's events as JSON lines (--events FILE): one object per line, each
// flushed as it happens, so tests and tools follow a live run by reading
// the file instead of matching the wording of log lines.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

namespace mt {

class EventFile {
 public:
  // Truncates or creates `path`; throws std::runtime_error naming it when
  // it cannot be opened.
  explicit EventFile(const std::string& path);
  ~EventFile();
  EventFile(const EventFile&) = delete;
  EventFile& operator=(const EventFile&) = delete;

  // Writes {"t": seconds since opened, "event": name, ...fields}. Thread-safe;
  // a failed write is dropped (events never stop a run).
  void Write(const std::string& name,
             nlohmann::ordered_json fields = nlohmann::ordered_json::object());

 private:
  std::mutex mu_;
  std::FILE* file_ = nullptr;
  std::chrono::steady_clock::time_point opened_;
};

}  // namespace mt
