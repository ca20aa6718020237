// Small file helpers for end-to-end tests: per-test temporary directories,
// whole-file reads, and mt's JSON reports parsed, so tests check a report's
// fields rather than how it is laid out.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace mt::test_support {

inline std::filesystem::path FreshTempDir(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() / ("mt-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p;
}

inline std::string ReadAll(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A --report (or any JSON file); a test failure and an empty object when it
// is missing or not JSON, so the field checks after it fail by name.
inline nlohmann::json ReadJson(const std::filesystem::path& p) {
  const std::string text = ReadAll(p);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    ADD_FAILURE() << p << " is not a JSON report:\n" << text;
    return nlohmann::json::object();
  }
  return j;
}

// The entry for the worker called `name` in a hub report's "workers"; an
// empty object (and a test failure) when there is none.
inline nlohmann::json ReportedWorker(const nlohmann::json& hub_report, const std::string& name) {
  for (const auto& w : hub_report.value("workers", nlohmann::json::array()))
    if (w.value("name", "") == name) return w;
  ADD_FAILURE() << "no worker named " << name << " in the hub's report:\n" << hub_report.dump(2);
  return nlohmann::json::object();
}

// A report's "placement" ("conv1:opencl,relu1:opencl,...", a step moved to
// the CPU as "relu1:cpu(opencl lacks ...)") as layer -> where it runs.
inline std::map<std::string, std::string> PlacementOf(const std::string& placement) {
  std::map<std::string, std::string> where;
  std::stringstream in(placement);
  std::string step;
  while (std::getline(in, step, ',')) {
    const size_t colon = step.find(':');
    if (colon == std::string::npos) {
      ADD_FAILURE() << "placement step '" << step << "' has no backend in: " << placement;
      continue;
    }
    where[step.substr(0, colon)] = step.substr(colon + 1);
  }
  return where;
}

}  // namespace mt::test_support
