#include "model_io/onnx_import_budget.h"

#include <cstdio>

#include "model_io/onnx_error.h"

namespace mt {
namespace {

// `total + amount`, refusing past `limit`. The amount is a double so that
// what a hostile tensor's dims multiply to is named, not wrapped; below the
// limit (2^53 at most) it is exact.
int64_t Charged(int64_t total, double amount, int64_t limit, const std::string& what,
                const char* unit) {
  if (amount >= 0 && amount <= static_cast<double>(limit - total))
    return total + static_cast<int64_t>(amount);
  const bool bytes = std::string(unit) == "bytes";
  const auto text = [&](double v) {
    char number[32];
    std::snprintf(number, sizeof number, "%.0f", v);
    return bytes ? ByteSizeText(v) : std::string(number) + " " + unit;
  };
  throw OnnxError(what + ": needs " + text(amount) + " with " + text(static_cast<double>(total)) +
                  " already taken, more than the " + text(static_cast<double>(limit)) +
                  " an ONNX import may hold (a damaged or crafted file?)");
}

}  // namespace

void CheckOnnxFileSize(const std::string& origin, double bytes, const OnnxImportLimits& limits) {
  if (bytes > static_cast<double>(limits.max_file_bytes))
    throw OnnxError(origin + ": " + ByteSizeText(bytes) + ", more than the " +
                    ByteSizeText(static_cast<double>(limits.max_file_bytes)) +
                    " an ONNX import reads");
}

void CheckOnnxNodeCount(const std::string& origin, int64_t nodes, const OnnxImportLimits& limits) {
  if (nodes > limits.max_nodes)
    throw OnnxError(origin + ": the graph has " + std::to_string(nodes) + " nodes, more than the " +
                    std::to_string(limits.max_nodes) +
                    " an ONNX import takes (a damaged or crafted file?)");
}

void CheckOnnxParsedBytes(const std::string& origin, int64_t bytes,
                          const OnnxImportLimits& limits) {
  if (bytes > limits.max_parsed_bytes)
    throw OnnxError(origin + ": its messages would take " +
                    ByteSizeText(static_cast<double>(bytes)) + " once parsed, more than the " +
                    ByteSizeText(static_cast<double>(limits.max_parsed_bytes)) +
                    " an ONNX import may hold (a damaged or crafted file?)");
}

std::string ByteSizeText(double bytes) {
  char text[32];
  if (bytes < 1e3)
    std::snprintf(text, sizeof text, "%.0f bytes", bytes);
  else if (bytes < 1e6)
    std::snprintf(text, sizeof text, "%.1f KB", bytes / 1e3);
  else if (bytes < 1e9)
    std::snprintf(text, sizeof text, "%.1f MB", bytes / 1e6);
  else
    std::snprintf(text, sizeof text, "%.1f GB", bytes / 1e9);
  return text;
}

void OnnxImportBudget::ChargeConstant(const std::string& what, int64_t elements, int bytes_each) {
  constant_bytes_ = Charged(constant_bytes_, static_cast<double>(elements) * bytes_each,
                            limits_.max_constant_bytes, what, "bytes");
}

void OnnxImportBudget::ChargeWeights(const std::string& what, int64_t params,
                                     int64_t running_stats) {
  const int64_t p =
      Charged(params_, static_cast<double>(params), limits_.max_params, what, "parameters");
  running_stats_ = Charged(running_stats_, static_cast<double>(running_stats),
                           limits_.max_running_stats, what, "running statistics");
  params_ = p;
}

}  // namespace mt
