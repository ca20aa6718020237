// The state of one ONNX import: which of our values each ONNX tensor is,
// the graph's constants, and the layers made so far with their weights.
// onnx_importer.cc walks the graph and checks the result; the per-op
// translations live in onnx_import_ops.cc.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "model_io/model_weights.h"
#include "model_io/onnx_import_budget.h"
#include "model_io/onnx_node.h"
#include "model_io/onnx_tensors.h"
#include "model_io/unique_names.h"
#include "onnx/onnx_pb.h"

namespace mt {

// What an ONNX tensor of the graph is in our model.
struct ImportedValue {
  std::string source;  // "input" or the layer name making it
  int layer = -1;      // that layer's index, -1 for the model's input
  bool flat = false;   // [features] per sample, else [C][H][W]
  // GlobalAveragePool's output: ONNX holds [N, C, 1, 1] where ours is flat
  // already, so the Flatten or Reshape after it makes no layer.
  bool pooled = false;
  // Zero padding on each side of H and W that a Pad node put on this value;
  // only the pooling after it (PyTorch's AvgPool2d) can take it, so Value()
  // refuses such a value and PaddedValue() hands it over.
  int zero_pad = 0;
};

class OnnxImporter {
 public:
  OnnxImporter(const onnx::ModelProto& model, std::string origin,
               const OnnxImportLimits& limits = {});
  LoadedModel Run();

  // --- for the op translations ---
  // The graph tensor at input i; fails when it is a constant or unknown.
  const ImportedValue& Value(const OnnxNode& n, int i) const;
  // Value(n, i), failing unless it is [C][H][W].
  const ImportedValue& SpatialValue(const OnnxNode& n, int i) const;
  // SpatialValue, but when `padded_ok` also the output of a zero Pad.
  const ImportedValue& PaddedValue(const OnnxNode& n, int i, bool padded_ok) const;
  bool IsConstant(const std::string& tensor) const { return constants_.count(tensor) > 0; }
  // The constant at input i (an initializer or a Constant node's output);
  // fails when it is a graph tensor or missing. `role` names it ("weight").
  const OnnxConstant& Constant(const OnnxNode& n, int i, const std::string& role) const;
  // A FLOAT constant of `rank` dims (-1: any), failing otherwise.
  const OnnxConstant& FloatConstant(const OnnxNode& n, int i, const std::string& role,
                                    int rank) const;
  // Before making a constant of `elements` values (OnnxImportLimits): fails
  // naming the node and the sizes when the import's constants would pass
  // their budget. Every translation that makes a constant charges first.
  void ChargeConstant(const OnnxNode& n, int64_t elements, bool is_float);
  void AddConstant(const std::string& tensor, OnnxConstant c);
  // The node's first output is the constant at input 0, shared, not copied.
  void ShareConstant(const OnnxNode& n);
  // Before allocating a layer's weights: as ChargeConstant, against the
  // parameters and running statistics a model may have. AddLayer takes no
  // more than was charged.
  void ChargeWeights(const OnnxNode& n, int64_t params, int64_t running_stats);

  // Adds a layer reading `inputs`, named after the node; the node's first
  // output becomes its value. Returns the layer's index.
  int AddLayer(const OnnxNode& n, proto::Layer layer, const std::vector<ImportedValue>& inputs,
               bool flat, bool pooled, std::vector<float> params = {},
               std::vector<float> stats = {});
  // The node's first output is `v` itself (Identity, Flatten after pooling).
  void Alias(const OnnxNode& n, ImportedValue v);
  // How many node inputs (and graph outputs) read `tensor`.
  int Readers(const std::string& tensor) const;

  // Dense layers made from MatMul, or Gemm without C, whose bias is still
  // zeros: an Add of a constant after them fills it.
  std::set<int>& pending_bias() { return pending_bias_; }
  const proto::Layer& layer(int i) const { return spec_.layer(i); }
  // For a pattern that turns a layer into another kind (Sigmoid + Mul: silu).
  proto::Layer& mutable_layer(int i) { return *spec_.mutable_layer(i); }
  // What layer i reads, as AddLayer was given it.
  const std::vector<ImportedValue>& layer_inputs(int i) const { return inputs_[i]; }
  std::vector<float>& params_of(int i) { return params_[i]; }
  // After the model is built: the value at `layer` (-1: input) must hold
  // `count` floats per sample (Reshape to [-1, count]).
  void ExpectCount(const OnnxNode& n, int layer, int64_t count);

 private:
  struct CountCheck {
    std::string node;
    int layer;
    int64_t count;
  };
  void ReadInput();
  void ReadConstants();
  void ImportNodes();
  void ReadOutput();
  void ReadClassNames(std::vector<std::string>& warnings);
  void ReadInputScaling();
  std::string LayerName(const OnnxNode& n);
  ModelWeights CheckAgainstModel();

  const onnx::ModelProto& model_;
  std::string origin_;
  proto::ModelSpec spec_;
  std::map<std::string, ImportedValue> values_;
  OnnxImportBudget budget_;
  std::map<std::string, std::shared_ptr<const OnnxConstant>> constants_;
  std::map<std::string, int> readers_;
  UniqueNames names_;
  size_t params_taken_ = 0, stats_taken_ = 0;       // by AddLayer, within the charges
  std::vector<std::vector<float>> params_, stats_;  // per layer
  std::vector<std::string> layer_nodes_;            // per layer: the node's label
  std::vector<std::vector<ImportedValue>> inputs_;  // per layer
  std::set<int> pending_bias_;
  std::vector<CountCheck> count_checks_;
};

// Translates node `n` into layers, aliases or constants; fails naming the
// supported ops when its op is not one of them.
void ImportOnnxNode(OnnxImporter& im, const OnnxNode& n);
// Whether some translation takes the op (layers, constants, shape arithmetic).
bool OnnxOpKnown(const std::string& op);
// "Add, AveragePool, ...": the ops that import as layers, for messages. The
// constants and shape arithmetic a PyTorch export carries are not listed.
std::string SupportedLayerOpsText();

}  // namespace mt
