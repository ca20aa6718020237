#include "model_io/input_scaling_metadata.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "model_io/onnx_error.h"

namespace mt {
namespace {

constexpr size_t kMaxValues = 3;  // one per channel of an RGB image

// The comma-separated form mt's exports wrote before the JSON array: every
// part a whole number text, nothing else (no spaces, no empty parts).
bool ParseCommaList(const std::string& text, std::vector<float>& out) {
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string part = text.substr(at, comma - at);
    if (part.empty() || std::isspace(static_cast<unsigned char>(part[0]))) return false;
    char* end = nullptr;
    const float v = std::strtof(part.c_str(), &end);
    if (end != part.c_str() + part.size()) return false;
    out.push_back(v);
    at = comma + 1;
  }
  return true;
}

}  // namespace

std::vector<float> ParseScalingMetadata(const std::string& origin, const std::string& key,
                                        const std::string& value) {
  std::vector<float> out;
  const nlohmann::json j = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
  bool ok = false;
  if (j.is_number()) {
    out.push_back(j.get<float>());
    ok = true;
  } else if (j.is_array()) {
    ok = !j.empty();
    for (const auto& v : j) {
      ok = ok && v.is_number();
      if (ok) out.push_back(v.get<float>());
    }
  } else if (j.is_discarded()) {
    ok = ParseCommaList(value, out);
  }
  for (float v : out) ok = ok && std::isfinite(v);
  if (!ok || out.size() > kMaxValues)
    throw OnnxError(origin + ": metadata " + key + " '" + value +
                    "' is not a number or a JSON list of one number per channel, such as 0.5 or "
                    "[0.485, 0.456, 0.406]");
  return out;
}

std::string ScalingMetadataText(const std::vector<float>& values) {
  std::string s = "[";
  for (float v : values) {
    char buf[32];
    // The shortest of %.6g..%.9g that reads back as v: 0.485f prints as
    // 0.485, not 0.485000014.
    for (int digits = 6; digits <= 9; ++digits) {
      std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(v));
      if (std::strtof(buf, nullptr) == v) break;
    }
    s += (s.size() > 1 ? "," : "") + std::string(buf);
  }
  return s + "]";
}

}  // namespace mt
