// Following a daemon's --events file (JSON lines) in end-to-end tests:
// wait, with a bound, until an event matching some fields has happened, so
// tests observe what the hub and workers do rather than how they word it.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace mt::test_support {

// Every event written so far; a line still being written is left out.
inline std::vector<nlohmann::json> ReadEvents(const std::filesystem::path& path) {
  std::vector<nlohmann::json> events;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // no newline yet: the writer is mid-line
    nlohmann::json e = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!e.is_discarded()) events.push_back(std::move(e));
  }
  return events;
}

// How many events named `name` carry every field of `fields` with the same value.
inline int CountEvents(const std::filesystem::path& path, const std::string& name,
                       const nlohmann::json& fields = nlohmann::json::object()) {
  int n = 0;
  for (const auto& e : ReadEvents(path)) {
    if (e.value("event", "") != name) continue;
    bool match = true;
    for (const auto& [key, value] : fields.items()) match = match && e.contains(key) && e[key] == value;
    n += match;
  }
  return n;
}

// Waits until at least `times` such events have happened; false after timeout_s.
inline bool WaitForEvent(const std::filesystem::path& path, const std::string& name, const nlohmann::json& fields,
                         double timeout_s, int times = 1) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    if (CountEvents(path, name, fields) >= times) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    // A file has no change notification we can wait on portably; poll it.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace mt::test_support
