// Small file helpers for end-to-end tests: per-test temporary directories,
// whole-file reads, and number fields of mt's flat JSON reports.
#pragma once

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
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

// A top-level or first-found number field of a report; NaN when absent.
inline double JsonNumber(const std::string& json, const std::string& key) {
  const auto at = json.find("\"" + key + "\": ");
  if (at == std::string::npos) return NAN;
  return std::stod(json.substr(at + key.size() + 4));
}

}  // namespace mt::test_support
