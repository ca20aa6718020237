// The one format of the numbers an ONNX file carries in metadata_props to
// say how to feed it: mt.input_mean and mt.input_std (for images in
// [0, 1], per channel). mt writes a JSON array, one value for every
// channel or one per channel: [0.5], [0.485,0.456,0.406]. It reads that, a
// single JSON number (0.5, as a user may add to a PyTorch export), and the
// comma-separated list mt wrote before (0.485000014,0.456,0.405999988).
// Anything else is refused naming the key and its value: a model fed
// inputs scaled otherwise than it expects computes garbage, silently.
// The exporter and the importer both go through here; so do mtmodel info
// and eval, mtworker and mthub, which import through LoadModelFile.
#pragma once

#include <string>
#include <vector>

namespace mt {

// Throws OnnxError "<origin>: metadata <key> '<value>' is not ...".
std::vector<float> ParseScalingMetadata(const std::string& origin, const std::string& key,
                                        const std::string& value);

// [v1,v2,...], each the shortest text that reads back as the same float.
std::string ScalingMetadataText(const std::vector<float>& values);

}  // namespace mt
