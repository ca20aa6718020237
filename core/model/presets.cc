#include "core/model/presets.h"

namespace mt {
namespace {

// LeNet-5 (ReLU and max-pool variant) for 1x28x28 input, 10 classes.
constexpr const char* kLeNet5 = R"(
name: "lenet5"
input { channels: 1 height: 28 width: 28 }
layer { name: "conv1" conv { filters: 6 kernel: 5 padding: 2 } }
layer { name: "relu1" relu {} }
layer { name: "pool1" maxpool { size: 2 } }
layer { name: "conv2" conv { filters: 16 kernel: 5 } }
layer { name: "relu2" relu {} }
layer { name: "pool2" maxpool { size: 2 } }
layer { name: "flatten" flatten {} }
layer { name: "fc1" dense { units: 120 } }
layer { name: "relu3" relu {} }
layer { name: "fc2" dense { units: 84 } }
layer { name: "relu4" relu {} }
layer { name: "fc3" dense { units: 10 } }
)";

// "Mentee": five 3x3 convs (32, 32, 64, 64, 128) with max-pool after the 2nd,
// 4th and 5th, then dense 256, 128, 10, for 3x32x32 input (CIFAR-10).
constexpr const char* kMentee = R"(
name: "mentee"
input { channels: 3 height: 32 width: 32 }
layer { name: "conv1" conv { filters: 32 kernel: 3 padding: 1 } }
layer { name: "relu_c1" relu {} }
layer { name: "conv2" conv { filters: 32 kernel: 3 padding: 1 } }
layer { name: "relu_c2" relu {} }
layer { name: "pool2" maxpool { size: 2 } }
layer { name: "conv3" conv { filters: 64 kernel: 3 padding: 1 } }
layer { name: "relu_c3" relu {} }
layer { name: "conv4" conv { filters: 64 kernel: 3 padding: 1 } }
layer { name: "relu_c4" relu {} }
layer { name: "pool4" maxpool { size: 2 } }
layer { name: "conv5" conv { filters: 128 kernel: 3 padding: 1 } }
layer { name: "relu_c5" relu {} }
layer { name: "pool5" maxpool { size: 2 } }
layer { name: "flatten" flatten {} }
layer { name: "fc1" dense { units: 256 } }
layer { name: "relu_f1" relu {} }
layer { name: "fc2" dense { units: 128 } }
layer { name: "relu_f2" relu {} }
layer { name: "fc3" dense { units: 10 } }
)";

}  // namespace

const char* PresetSpecText(const std::string& name) {
  if (name == "lenet5") return kLeNet5;
  if (name == "mentee") return kMentee;
  return nullptr;
}

std::vector<std::string> PresetNames() { return {"lenet5", "mentee"}; }

}  // namespace mt
