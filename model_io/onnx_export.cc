#include "model_io/onnx_export.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <stdexcept>

#include "core/data/dataset.h"
#include "core/util/atomic_file.h"
#include "model_io/input_scaling_metadata.h"
#include "model_io/onnx_layer_translators.h"
#include "model_io/onnx_tensors.h"
#include "model_io/weights_fit.h"

namespace mt {
namespace {

constexpr int64_t kIrVersion = 7;  // what opset 13 came with

// A FLOAT tensor [N, dims...] with N symbolic.
void DescribeTensor(onnx::ValueInfoProto& v, const std::string& name, const Shape& sample) {
  v.set_name(name);
  auto* t = v.mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_param("N");
  for (int i = 0; i < sample.rank(); ++i) t->mutable_shape()->add_dim()->set_dim_value(sample[i]);
}

void AddMetadata(onnx::ModelProto& m, const std::string& key, const std::string& value) {
  auto* p = m.add_metadata_props();
  p->set_key(key);
  p->set_value(value);
}

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// How to feed the model, in the file itself: every mt model takes images
// scaled as core/data/dataset.h scales them (the spec's mean and std, or
// [-1, 1]), and ONNX Runtime fed plain [0, 1] images got 0.14 accuracy from
// a model that reached 0.79 (issue 31). Mean and std are for images in
// [0, 1], per channel, as torchvision's Normalize takes them.
void DescribeInput(onnx::ModelProto& m, const proto::ModelSpec& spec) {
  AddMetadata(m, "mt.input_layout", "NCHW");
  if (spec.input_mean_size() > 0) {
    AddMetadata(m, "mt.input_mean",
                ScalingMetadataText({spec.input_mean().begin(), spec.input_mean().end()}));
    AddMetadata(m, "mt.input_std",
                ScalingMetadataText({spec.input_std().begin(), spec.input_std().end()}));
    AddMetadata(m, "mt.input_scaling",
                "input = (image - mean) / std for an image in [0, 1], per channel when mean and "
                "std list one value per channel");
    return;
  }
  // [-1, 1] is mean 0.5 and std 0.5 exactly; computed from the float
  // constants they would print as 0.49999997.
  AddMetadata(m, "mt.input_mean", ScalingMetadataText({0.5f}));
  AddMetadata(m, "mt.input_std", ScalingMetadataText({0.5f}));
  AddMetadata(m, "mt.input_scaling",
              "input = (image - mean) / std for an image in [0, 1]; for pixels in [0, 255]: "
              "pixel * " +
                  Number(kPixelScale) + " + " + Number(kPixelOffset));
}

}  // namespace

std::string ExportOnnxBytes(const proto::ModelSpec& spec, const ModelWeights& weights,
                            const ModelMetadata& metadata) {
  BuiltModel built;
  try {
    built = BuildOnCpu(spec);
    CheckWeightsFit(*built.model, spec, weights, "the weights");
  } catch (const std::exception& e) {
    throw OnnxError(std::string("cannot export model ") + spec.name() + " to ONNX: " + e.what());
  }
  const Model& model = *built.model;

  onnx::ModelProto m;
  m.set_ir_version(kIrVersion);
  m.set_producer_name("mt");
  DescribeInput(m, spec);
  if (spec.class_names_size() > 0)
    AddMetadata(m, "mt.class_names",
                nlohmann::json(
                    std::vector<std::string>(spec.class_names().begin(), spec.class_names().end()))
                    .dump());
  for (const auto& [key, value] : metadata) AddMetadata(m, key, value);
  auto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOnnxExportOpset);
  onnx::GraphProto& g = *m.mutable_graph();
  g.set_name(spec.name());
  // An imported file's names, unless a layer's tensor has taken one.
  const auto layer_named = [&spec](const std::string& name) {
    for (const proto::Layer& l : spec.layer())
      if (l.name() == name) return true;
    return false;
  };
  const std::string input =
      spec.input_name().empty() || layer_named(spec.input_name()) ? "input" : spec.input_name();
  DescribeTensor(*g.add_input(), input, model.input_shape());
  GraphWriter w(g);

  std::vector<std::string> outputs;  // per layer: its output tensor
  for (size_t i = 0; i < model.layers().size(); ++i) {
    const proto::Layer& l = spec.layer(static_cast<int>(i));
    const std::string name = l.name().empty() ? "layer" + std::to_string(i + 1) : l.name();
    outputs.push_back(name);
    std::vector<std::string> ins;
    std::vector<Shape> in_shapes;
    for (int v : model.layer_inputs(i)) {
      ins.push_back(v < 0 ? input : outputs[v]);
      in_shapes.push_back(v < 0 ? model.input_shape() : model.layer_output_shape(v));
    }
    const int first = model.layer_inputs(i)[0];
    const Shape& in = first < 0 ? model.input_shape() : model.layer_output_shape(first);
    const float* p = weights.params.data() + model.ParamOffsets()[i];
    const float* s = weights.running_stats.data() + model.RunningStatOffsets()[i];
    const OnnxExportFn write = FindOnnxExport(l.kind_case());
    if (!write)
      throw OnnxError("cannot export layer " + name + ": layer kind " +
                      LayerKindName(l.kind_case()) + " has no ONNX translation");
    write(OnnxLayerOut{w, l, name, ins, in, p, s, in_shapes});
  }
  std::string output = outputs.back();
  if (!spec.output_name().empty() && !layer_named(spec.output_name()) &&
      spec.output_name() != input) {
    // The layers name their tensors after themselves; the graph's output
    // takes the imported file's name through an Identity.
    onnx::NodeProto& rename = *g.add_node();
    rename.set_op_type("Identity");
    rename.set_name(spec.output_name());
    rename.add_input(output);
    rename.add_output(spec.output_name());
    output = spec.output_name();
  }
  DescribeTensor(*g.add_output(), output, model.output_shape());
  std::string bytes;
  if (!m.SerializeToString(&bytes)) throw OnnxError("cannot encode the ONNX model");
  return bytes;
}

void ExportOnnx(const proto::ModelSpec& spec, const ModelWeights& weights, const std::string& path,
                const ModelMetadata& metadata) {
  const std::string bytes = ExportOnnxBytes(spec, weights, metadata);
  try {
    WriteFileAtomically(path, bytes);
  } catch (const std::runtime_error& e) {
    throw OnnxError(std::string("cannot write the ONNX model: ") + e.what());
  }
}

}  // namespace mt
