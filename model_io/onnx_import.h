// ONNX models (opsets 11 to 17) as mt models: the spec and its weights.
// The ops that become layers are those of model_io/onnx_layers/ and of the
// layer kinds whose registry entry names an elementwise ONNX op (Relu,
// Sigmoid, Tanh, HardSigmoid, HardSwish, LeakyRelu); besides them the
// constants, identities, all-zero Pad and shape arithmetic of a PyTorch
// export. One FLOAT input [N, C, H, W], one output [N, classes]. A model
// with ops mt lacks is an OnnxError listing every such node at once and the
// ops that import as layers.
#pragma once

#include <string>

#include "model_io/model_weights.h"
#include "model_io/onnx_error.h"
#include "model_io/onnx_limits.h"
#include "onnx/onnx_pb.h"

namespace mt {

// Within `limits` (onnx_limits.h): a file past them is an OnnxError naming
// the node and the sizes, raised before the memory is taken.
LoadedModel ImportOnnx(const std::string& path, const OnnxImportLimits& limits = {});
// `origin` names the source in errors.
// Its warnings (LoadedModel::warnings) include FoldedBatchNormWarning's.
LoadedModel ImportOnnxBytes(const std::string& bytes, const std::string& origin,
                            const OnnxImportLimits& limits = {});
// "" unless `model` looks like PyTorch's default export of a net whose
// batch norm was folded into its convolutions; else what to do about it.
std::string FoldedBatchNormWarning(const onnx::ModelProto& model, const std::string& origin);

}  // namespace mt
