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

// "mobilenet-tiny": MobileNetV2's shape at CIFAR size, for 3x32x32 input.
// Stem conv 16 (3x3, BN, ReLU6); inverted residual blocks (expansion t,
// channels c, stride s) = (1,16,1) (6,24,2) (6,24,1) (6,32,2) (6,32,1), each
// a 1x1 expansion to t times its input (none when t is 1), a 3x3 depthwise
// conv with stride s and a 1x1 linear projection to c, batch norm after
// each and ReLU6 after the first two, plus the block's input where stride is
// 1 and channels match; 1x1 conv 128 (BN, ReLU6), global average pool, dense
// 10. Convs before batch norm carry no bias.
constexpr const char* kMobileNetTiny = R"(
name: "mobilenet-tiny"
input { channels: 3 height: 32 width: 32 }
layer { name: "stem" conv { filters: 16 kernel: 3 padding: 1 no_bias: true } }
layer { name: "stem_bn" batchnorm {} }
layer { name: "stem_relu" relu6 {} }
layer { name: "b1_dw" conv { filters: 16 kernel: 3 padding: 1 groups: 16 no_bias: true } }
layer { name: "b1_dw_bn" batchnorm {} }
layer { name: "b1_dw_relu" relu6 {} }
layer { name: "b1_project" conv { filters: 16 kernel: 1 no_bias: true } }
layer { name: "b1_project_bn" batchnorm {} }
layer { name: "b1_add" add {} inputs: "stem_relu" inputs: "b1_project_bn" }
layer { name: "b2_expand" conv { filters: 96 kernel: 1 no_bias: true } }
layer { name: "b2_expand_bn" batchnorm {} }
layer { name: "b2_expand_relu" relu6 {} }
layer { name: "b2_dw" conv { filters: 96 kernel: 3 stride: 2 padding: 1 groups: 96 no_bias: true } }
layer { name: "b2_dw_bn" batchnorm {} }
layer { name: "b2_dw_relu" relu6 {} }
layer { name: "b2_project" conv { filters: 24 kernel: 1 no_bias: true } }
layer { name: "b2_project_bn" batchnorm {} }
layer { name: "b3_expand" conv { filters: 144 kernel: 1 no_bias: true } }
layer { name: "b3_expand_bn" batchnorm {} }
layer { name: "b3_expand_relu" relu6 {} }
layer { name: "b3_dw" conv { filters: 144 kernel: 3 padding: 1 groups: 144 no_bias: true } }
layer { name: "b3_dw_bn" batchnorm {} }
layer { name: "b3_dw_relu" relu6 {} }
layer { name: "b3_project" conv { filters: 24 kernel: 1 no_bias: true } }
layer { name: "b3_project_bn" batchnorm {} }
layer { name: "b3_add" add {} inputs: "b2_project_bn" inputs: "b3_project_bn" }
layer { name: "b4_expand" conv { filters: 144 kernel: 1 no_bias: true } }
layer { name: "b4_expand_bn" batchnorm {} }
layer { name: "b4_expand_relu" relu6 {} }
layer { name: "b4_dw" conv { filters: 144 kernel: 3 stride: 2 padding: 1 groups: 144 no_bias: true } }
layer { name: "b4_dw_bn" batchnorm {} }
layer { name: "b4_dw_relu" relu6 {} }
layer { name: "b4_project" conv { filters: 32 kernel: 1 no_bias: true } }
layer { name: "b4_project_bn" batchnorm {} }
layer { name: "b5_expand" conv { filters: 192 kernel: 1 no_bias: true } }
layer { name: "b5_expand_bn" batchnorm {} }
layer { name: "b5_expand_relu" relu6 {} }
layer { name: "b5_dw" conv { filters: 192 kernel: 3 padding: 1 groups: 192 no_bias: true } }
layer { name: "b5_dw_bn" batchnorm {} }
layer { name: "b5_dw_relu" relu6 {} }
layer { name: "b5_project" conv { filters: 32 kernel: 1 no_bias: true } }
layer { name: "b5_project_bn" batchnorm {} }
layer { name: "b5_add" add {} inputs: "b4_project_bn" inputs: "b5_project_bn" }
layer { name: "head" conv { filters: 128 kernel: 1 no_bias: true } }
layer { name: "head_bn" batchnorm {} }
layer { name: "head_relu" relu6 {} }
layer { name: "pool" global_avgpool {} }
layer { name: "fc" dense { units: 10 } }
)";

}  // namespace

const char* PresetSpecText(const std::string& name) {
  if (name == "lenet5") return kLeNet5;
  if (name == "mentee") return kMentee;
  if (name == "mobilenet-tiny") return kMobileNetTiny;
  return nullptr;
}

std::vector<std::string> PresetNames() { return {"lenet5", "mentee", "mobilenet-tiny"}; }

}  // namespace mt
