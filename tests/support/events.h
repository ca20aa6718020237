// Following a daemon's --events file (JSON lines) in end-to-end tests:
// wait, with a bound, until an event matching some fields has happened, so
// tests observe what the hub and workers do rather than how they word it.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace mt::test_support {

using Events = std::vector<nlohmann::json>;

// Every event written so far; a line still being written is left out.
inline Events ReadEvents(const std::filesystem::path& path) {
  Events events;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // no newline yet: the writer is mid-line
    nlohmann::json e = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!e.is_discarded()) events.push_back(std::move(e));
  }
  return events;
}

// Whether `e` is named `name` and carries every field of `fields` with the same value.
inline bool Matches(const nlohmann::json& e, const std::string& name,
                    const nlohmann::json& fields) {
  if (e.value("event", "") != name) return false;
  for (const auto& [key, value] : fields.items())
    if (!e.contains(key) || e[key] != value) return false;
  return true;
}

inline int CountEvents(const Events& events, const std::string& name,
                       const nlohmann::json& fields = nlohmann::json::object()) {
  int n = 0;
  for (const auto& e : events) n += Matches(e, name, fields);
  return n;
}

// How many events named `name` carry every field of `fields` with the same value.
inline int CountEvents(const std::filesystem::path& path, const std::string& name,
                       const nlohmann::json& fields = nlohmann::json::object()) {
  return CountEvents(ReadEvents(path), name, fields);
}

// The detail of each worker_dropped event of the worker named `name`: why
// the hub dropped it, as many times as it did.
inline std::vector<std::string> DropReasons(const std::filesystem::path& path,
                                            const std::string& name) {
  std::vector<std::string> why;
  for (const auto& e : ReadEvents(path))
    if (e.value("event", "") == "worker_dropped" && e.value("name", "") == name)
      why.push_back(e.value("detail", ""));
  return why;
}

// Waits until `done` holds for the events written so far; false after timeout_s.
inline bool WaitForEvents(const std::filesystem::path& path,
                          const std::function<bool(const Events&)>& done, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    if (done(ReadEvents(path))) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    // A file has no change notification we can wait on portably; poll it.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// Waits until at least `times` such events have happened; false after timeout_s.
inline bool WaitForEvent(const std::filesystem::path& path, const std::string& name,
                         const nlohmann::json& fields, double timeout_s, int times = 1) {
  return WaitForEvents(
      path, [&](const Events& events) { return CountEvents(events, name, fields) >= times; },
      timeout_s);
}

// The first event named `name` with every field of `fields`, waiting up to
// timeout_s for it; null when none came.
inline nlohmann::json AwaitEvent(const std::filesystem::path& path, const std::string& name,
                                 const nlohmann::json& fields, double timeout_s) {
  nlohmann::json found;
  WaitForEvents(
      path,
      [&](const Events& events) {
        for (const auto& e : events)
          if (Matches(e, name, fields)) {
            found = e;
            return true;
          }
        return false;
      },
      timeout_s);
  return found;
}

// Waits until a hub started with --events (and a --log-every short enough
// for the test) reports progress of at least `step` steps done.
inline bool WaitForStep(const std::filesystem::path& hub_events, int64_t step, double timeout_s) {
  return WaitForEvents(
      hub_events,
      [&](const Events& events) {
        for (const auto& e : events)
          if (e.value("event", "") == "progress" && e.value("step", int64_t{0}) >= step)
            return true;
        return false;
      },
      timeout_s);
}

}  // namespace mt::test_support
