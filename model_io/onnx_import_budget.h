// The running totals of one ONNX import against its OnnxImportLimits. Each
// charge comes before the allocation it pays for, from sizes known without
// allocating (a tensor's dims, a Concat's parts), and a refusal names what
// asked, what it asked for and the limit.
#pragma once

#include <cstdint>
#include <string>

#include "model_io/onnx_limits.h"

namespace mt {

class OnnxImportBudget {
 public:
  explicit OnnxImportBudget(const OnnxImportLimits& limits) : limits_(limits) {}

  const OnnxImportLimits& limits() const { return limits_; }
  // A constant of `elements` values of `bytes_each`; throws OnnxError naming
  // `what` ("file.onnx: initializer 'w'") when the total would pass the limit.
  void ChargeConstant(const std::string& what, int64_t elements, int bytes_each);
  // A layer's weights and running statistics, as ChargeConstant.
  void ChargeWeights(const std::string& what, int64_t params, int64_t running_stats);

  int64_t constant_bytes() const { return constant_bytes_; }
  int64_t params() const { return params_; }
  int64_t running_stats() const { return running_stats_; }

 private:
  OnnxImportLimits limits_;
  int64_t constant_bytes_ = 0, params_ = 0, running_stats_ = 0;
};

// Throw OnnxError naming `origin` when a file of `bytes`, or a graph of
// `nodes` nodes, is more than the limits take.
void CheckOnnxFileSize(const std::string& origin, double bytes, const OnnxImportLimits& limits);
void CheckOnnxNodeCount(const std::string& origin, int64_t nodes, const OnnxImportLimits& limits);
// When its parse would hold more than the limits take (OnnxWireScan).
void CheckOnnxParsedBytes(const std::string& origin, int64_t bytes, const OnnxImportLimits& limits);

// "3.2 GB", "512.0 MB", "17 bytes": a size for messages.
std::string ByteSizeText(double bytes);

}  // namespace mt
