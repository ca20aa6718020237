// The shape arithmetic PyTorch writes for x.view(x.size(0), -1) with a
// dynamic batch: Shape -> Gather -> Unsqueeze -> Concat -> Reshape. mt
// evaluates it on constants, the batch size standing as kBatchDim, so the
// Reshape sees [N, -1] as if it had been a constant.
#pragma once

#include <cstdint>
#include <limits>

#include "model_io/onnx_importer.h"

namespace mt {

// In an INT64 shape constant: the batch size, and a size mt does not track.
constexpr int64_t kBatchDim = std::numeric_limits<int64_t>::min() + 1;
constexpr int64_t kUnknownDim = std::numeric_limits<int64_t>::min() + 2;

void ImportShape(OnnxImporter& im, const OnnxNode& n);
void ImportGather(OnnxImporter& im, const OnnxNode& n);
void ImportUnsqueeze(OnnxImporter& im, const OnnxNode& n);
void ImportConcat(OnnxImporter& im, const OnnxNode& n);

}  // namespace mt
