// Prometheus' text exposition format (0.0.4), read back strictly for tests:
// every line a HELP or TYPE comment or a sample `name{labels} value`, each
// sample after its family's TYPE line, label values unescaped. Failures
// are test failures (gtest), not exceptions.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace mt::test_support {

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

struct Exposition {
  std::map<std::string, std::string> types;  // family -> type
  std::vector<Sample> samples;
};

// Label values unescaped: \\ \" \n.
inline bool ParseLabels(const std::string& text, std::map<std::string, std::string>& out) {
  size_t i = 0;
  while (i < text.size()) {
    const size_t eq = text.find('=', i);
    if (eq == std::string::npos || eq + 1 >= text.size() || text[eq + 1] != '"') return false;
    const std::string key = text.substr(i, eq - i);
    if (!std::regex_match(key, std::regex("[a-zA-Z_][a-zA-Z0-9_]*"))) return false;
    std::string value;
    size_t j = eq + 2;
    for (; j < text.size() && text[j] != '"'; ++j) {
      if (text[j] == '\\') {
        if (++j >= text.size()) return false;
        value += text[j] == 'n' ? '\n' : text[j];
        if (text[j] != 'n' && text[j] != '\\' && text[j] != '"') return false;
      } else if (text[j] == '\n') {
        return false;
      } else {
        value += text[j];
      }
    }
    if (j >= text.size()) return false;
    out[key] = value;
    i = j + 1;
    if (i < text.size()) {
      if (text[i] != ',') return false;
      ++i;
    }
  }
  return true;
}

inline double ParseValue(const std::string& v) {
  if (v == "+Inf") return std::numeric_limits<double>::infinity();
  if (v == "-Inf") return -std::numeric_limits<double>::infinity();
  if (v == "NaN") return std::nan("");
  size_t used = 0;
  const double d = std::stod(v, &used);
  if (used != v.size()) throw std::invalid_argument("trailing characters in " + v);
  return d;
}

// The family a sample belongs to: a histogram's series carry a suffix.
inline std::string FamilyOf(const std::string& name,
                            const std::map<std::string, std::string>& types) {
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    const std::string s = suffix;
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
      const std::string base = name.substr(0, name.size() - s.size());
      const auto it = types.find(base);
      if (it != types.end() && it->second == "histogram") return base;
    }
  }
  return name;
}

// Fails the test on any line that is not a comment, a HELP/TYPE line or
// `name{labels} value`, and on samples before their family's TYPE.
inline Exposition ParsePrometheus(const std::string& text) {
  Exposition e;
  std::istringstream in(text);
  std::string line;
  const std::regex sample_re(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$)");
  const std::regex type_re(R"(^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram)$)");
  const std::regex help_re(R"(^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .*$)");
  EXPECT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n') << "the exposition ends with a newline";
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, type_re)) {
      EXPECT_EQ(e.types.count(m[1]), 0u) << "TYPE given twice: " << line;
      e.types[m[1]] = m[2];
      continue;
    }
    if (std::regex_match(line, help_re)) continue;
    if (!std::regex_match(line, m, sample_re)) {
      ADD_FAILURE() << "not a sample line: [" << line << "]";
      continue;
    }
    Sample s;
    s.name = m[1];
    EXPECT_TRUE(ParseLabels(m[3], s.labels)) << line;
    EXPECT_NO_THROW(s.value = ParseValue(m[4])) << line;
    EXPECT_EQ(e.types.count(FamilyOf(s.name, e.types)), 1u) << "no TYPE before " << line;
    e.samples.push_back(std::move(s));
  }
  return e;
}

inline std::vector<Sample> FindSamples(const Exposition& e, const std::string& name) {
  std::vector<Sample> out;
  for (const Sample& s : e.samples)
    if (s.name == name) out.push_back(s);
  return out;
}

}  // namespace mt::test_support
