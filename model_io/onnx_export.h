// mt models as ONNX (opset 13, IR version 7): a graph ONNX Runtime runs
// unchanged, with the batch dimension symbolic ("N") and the weights as
// initializers named after the layers ("conv1.weight"). Batch norm is the
// inference form with the running statistics; dropout stays a Dropout node
// (an identity in inference) so that importing the file gives the same spec.
// The file says how to feed it (metadata_props): mt.input_layout,
// mt.input_mean and mt.input_std (for images in [0, 1], per channel),
// mt.input_scaling in words, mt.class_names (a JSON array, when the spec
// names its outputs) and whatever `metadata` adds. The input and output
// keep the names an imported file gave them (ModelSpec.input_name,
// output_name).
#pragma once

#include <string>

#include "model_io/model_weights.h"
#include "model_io/onnx_error.h"

namespace mt {

constexpr int kOnnxExportOpset = 13;

// Throws OnnxError when the spec does not build or the weights do not fit it.
std::string ExportOnnxBytes(const proto::ModelSpec& spec, const ModelWeights& weights,
                            const ModelMetadata& metadata = {});
// Written atomically.
void ExportOnnx(const proto::ModelSpec& spec, const ModelWeights& weights, const std::string& path,
                const ModelMetadata& metadata = {});

}  // namespace mt
