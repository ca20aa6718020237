// Every layer kind of model.proto's `Layer.kind` in one place: each kind's
// file (core/layers/<kind>.cc) registers how to build the layer from its
// proto message (with the message's defaults), what its forward pass costs,
// a small example for the tests, and, for a one-to-one elementwise ONNX op,
// the ONNX mapping as data. Shape inference is the layer's own Setup().
// tests/modeltool/layer_registry_test.cc walks the oneof by reflection and
// fails for a kind without a complete entry (here and in model_io's ONNX
// translators).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/layers/layer.h"
#include "model.pb.h"

namespace mt {

// An ONNX op that maps one to one onto a layer kind: one input, one output,
// no weights, and float attributes that are float fields of the kind's
// message (model_io translates these kinds with one generic translator).
struct OnnxFloatAttribute {
  const char* onnx_name;  // "alpha"
  const char* field;      // the field of the kind's message: "alpha"
  float fallback;         // ONNX's default, which a 0 in the field stands for
};
struct OnnxElementwise {
  const char* op = nullptr;  // "Sigmoid"; null when model_io has a translator of its own
  std::vector<OnnxFloatAttribute> attributes;
};

struct LayerKind {
  proto::Layer::KindCase kind = proto::Layer::KIND_NOT_SET;
  // Builds the layer from its proto (the proto's zeros read as the documented
  // defaults); throws std::invalid_argument for settings it cannot take.
  std::unique_ptr<Layer> (*make)(const proto::Layer& layer) = nullptr;
  // Forward FLOPs per sample, stated by every kind (0 only where that is
  // the truth, as for comparisons): 2 per multiply-add, 1 per element summed.
  int64_t (*forward_flops)(const proto::Layer& layer, const std::vector<Shape>& in,
                           const Shape& out) = nullptr;
  // The kind in use, for the registry test: text-format `layer { ... }`
  // entries of a ModelSpec on a [2, 6, 6] input, the last of this kind.
  const char* example = nullptr;
  OnnxElementwise onnx;
};

// The proto field's name ("conv", "global_avgpool"), which is Layer::Type().
std::string LayerKindName(proto::Layer::KindCase kind);
// Null when the kind has no entry.
const LayerKind* FindLayerKind(proto::Layer::KindCase kind);
// Every registered entry, in field-number order.
std::vector<const LayerKind*> LayerKinds();
// The entry of `layer`'s kind; throws std::invalid_argument listing the kinds
// when it has none (or no kind is set).
const LayerKind& LayerKindOf(const proto::Layer& layer);
std::unique_ptr<Layer> MakeLayer(const proto::Layer& layer);

// Called by MT_REGISTER_LAYER_KIND at static initialisation; a second
// entry for one kind aborts the program there.
bool RegisterLayerKind(LayerKind entry);

#define MT_LAYER_KIND_CONCAT2(a, b) a##b
#define MT_LAYER_KIND_CONCAT(a, b) MT_LAYER_KIND_CONCAT2(a, b)
// At namespace scope in the kind's .cc file (linked whole, see core/CMakeLists.txt).
#define MT_REGISTER_LAYER_KIND(...)                                                      \
  [[maybe_unused]] static const bool MT_LAYER_KIND_CONCAT(mt_layer_kind_, __COUNTER__) = \
      ::mt::RegisterLayerKind(__VA_ARGS__)

}  // namespace mt
