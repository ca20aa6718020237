// A worker's placement (Hello.placement: "conv1:cpu,relu1:cpu,fc1:opencl")
// as the hub's log says it: layers counted per device, since the list
// itself runs to hundreds of bytes for larger models (the report keeps it
// whole). Where every layer is on the CPU there is nothing to say.
#pragma once

#include <string>

namespace mt {

// "opencl 5, cpu 2" (devices in order of first appearance); "" when every
// layer runs on the CPU or the placement is empty.
std::string PlacementSummary(const std::string& placement);

}  // namespace mt
