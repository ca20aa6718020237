#include "model_io/onnx_export.h"

#include <stdexcept>

#include "core/util/atomic_file.h"
#include "model_io/onnx_tensors.h"
#include "model_io/weights_fit.h"

namespace mt {
namespace {

constexpr int64_t kIrVersion = 7;  // what opset 13 came with

class GraphWriter {
 public:
  explicit GraphWriter(onnx::GraphProto& g) : g_(g) {}

  onnx::NodeProto& Node(const std::string& op, const std::string& name,
                        std::initializer_list<std::string> inputs, const std::string& output) {
    onnx::NodeProto& n = *g_.add_node();
    n.set_op_type(op);
    n.set_name(name);
    for (const std::string& in : inputs) n.add_input(in);
    n.add_output(output);
    return n;
  }
  // An initializer; returns its name.
  std::string Weight(const std::string& name, const std::vector<int64_t>& dims, const float* data) {
    *g_.add_initializer() = FloatTensor(name, dims, data);
    return name;
  }
  std::string Scalar(const std::string& name, float value) { return Weight(name, {}, &value); }

 private:
  onnx::GraphProto& g_;
};

void SetInts(onnx::NodeProto& n, const char* name, std::vector<int64_t> values) {
  onnx::AttributeProto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a.add_ints(v);
}

void SetInt(onnx::NodeProto& n, const char* name, int64_t value) {
  onnx::AttributeProto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(value);
}

void SetFloat(onnx::NodeProto& n, const char* name, float value) {
  onnx::AttributeProto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(value);
}

// A FLOAT tensor [N, dims...] with N symbolic.
void DescribeTensor(onnx::ValueInfoProto& v, const std::string& name, const Shape& sample) {
  v.set_name(name);
  auto* t = v.mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_param("N");
  for (int i = 0; i < sample.rank(); ++i) t->mutable_shape()->add_dim()->set_dim_value(sample[i]);
}

void Pool(onnx::NodeProto& n, int size, int stride) {
  SetInts(n, "kernel_shape", {size, size});
  SetInts(n, "strides", {stride ? stride : size, stride ? stride : size});
}

}  // namespace

std::string ExportOnnxBytes(const proto::ModelSpec& spec, const ModelWeights& weights) {
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
  auto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOnnxExportOpset);
  onnx::GraphProto& g = *m.mutable_graph();
  g.set_name(spec.name());
  DescribeTensor(*g.add_input(), "input", model.input_shape());
  GraphWriter w(g);

  std::vector<std::string> outputs;  // per layer: its output tensor
  for (size_t i = 0; i < model.layers().size(); ++i) {
    const proto::Layer& l = spec.layer(static_cast<int>(i));
    const std::string name = l.name().empty() ? "layer" + std::to_string(i + 1) : l.name();
    outputs.push_back(name);
    std::vector<std::string> ins;
    for (int v : model.layer_inputs(i)) ins.push_back(v < 0 ? "input" : outputs[v]);
    const int first = model.layer_inputs(i)[0];
    const Shape& in = first < 0 ? model.input_shape() : model.layer_output_shape(first);
    const float* p = weights.params.data() + model.ParamOffsets()[i];
    const float* s = weights.running_stats.data() + model.RunningStatOffsets()[i];
    switch (l.kind_case()) {
      case proto::Layer::kConv: {
        const auto& c = l.conv();
        const int64_t groups = c.groups() ? c.groups() : 1, k = c.kernel(), f = c.filters();
        const std::vector<int64_t> dims = {f, in[0] / groups, k, k};
        std::string weight = w.Weight(name + ".weight", dims, p);
        auto& n =
            c.no_bias()
                ? w.Node("Conv", name, {ins[0], weight}, name)
                : w.Node("Conv", name,
                         {ins[0], weight, w.Weight(name + ".bias", {f}, p + f * dims[1] * k * k)},
                         name);
        SetInts(n, "kernel_shape", {k, k});
        const int64_t stride = c.stride() ? c.stride() : 1;
        SetInts(n, "strides", {stride, stride});
        SetInts(n, "pads", {c.padding(), c.padding(), c.padding(), c.padding()});
        SetInts(n, "dilations", {1, 1});
        SetInt(n, "group", groups);
        break;
      }
      case proto::Layer::kBatchnorm: {
        const int64_t ch = in[0];
        auto& n = w.Node("BatchNormalization", name,
                         {ins[0], w.Weight(name + ".scale", {ch}, p),
                          w.Weight(name + ".shift", {ch}, p + ch),
                          w.Weight(name + ".running_mean", {ch}, s),
                          w.Weight(name + ".running_var", {ch}, s + ch)},
                         name);
        const auto& bn = l.batchnorm();
        SetFloat(n, "epsilon", bn.epsilon() ? bn.epsilon() : 1e-5f);
        SetFloat(n, "momentum", 1.0f - (bn.momentum() ? bn.momentum() : 0.1f));
        break;
      }
      case proto::Layer::kRelu: w.Node("Relu", name, {ins[0]}, name); break;
      case proto::Layer::kRelu6:
        w.Node("Clip", name, {ins[0], w.Scalar(name + ".min", 0), w.Scalar(name + ".max", 6)},
               name);
        break;
      case proto::Layer::kMaxpool:
        Pool(w.Node("MaxPool", name, {ins[0]}, name), l.maxpool().size(), l.maxpool().stride());
        break;
      case proto::Layer::kAvgpool:
        Pool(w.Node("AveragePool", name, {ins[0]}, name), l.avgpool().size(), l.avgpool().stride());
        break;
      case proto::Layer::kGlobalAvgpool:
        // ONNX keeps [N, C, 1, 1]; ours is flat.
        w.Node("GlobalAveragePool", name, {ins[0]}, name + ".pooled");
        SetInt(w.Node("Flatten", name + ".flatten", {name + ".pooled"}, name), "axis", 1);
        break;
      case proto::Layer::kAdd: {
        onnx::NodeProto& n = w.Node(ins.size() == 2 ? "Add" : "Sum", name, {}, name);
        for (const std::string& x : ins) n.add_input(x);
        break;
      }
      case proto::Layer::kFlatten:
        SetInt(w.Node("Flatten", name, {ins[0]}, name), "axis", 1);
        break;
      case proto::Layer::kDense: {
        const int64_t units = l.dense().units(), inputs = in.count();
        auto& n = w.Node("Gemm", name,
                         {ins[0], w.Weight(name + ".weight", {units, inputs}, p),
                          w.Weight(name + ".bias", {units}, p + units * inputs)},
                         name);
        SetInt(n, "transB", 1);
        break;
      }
      case proto::Layer::kDropout:
        w.Node("Dropout", name, {ins[0], w.Scalar(name + ".ratio", l.dropout().rate())}, name);
        break;
      case proto::Layer::KIND_NOT_SET: throw OnnxError("cannot export layer " + name + ": no kind");
    }
  }
  DescribeTensor(*g.add_output(), outputs.back(), model.output_shape());
  std::string bytes;
  if (!m.SerializeToString(&bytes)) throw OnnxError("cannot encode the ONNX model");
  return bytes;
}

void ExportOnnx(const proto::ModelSpec& spec, const ModelWeights& weights,
                const std::string& path) {
  const std::string bytes = ExportOnnxBytes(spec, weights);
  try {
    WriteFileAtomically(path, bytes);
  } catch (const std::runtime_error& e) {
    throw OnnxError(std::string("cannot write the ONNX model: ") + e.what());
  }
}

}  // namespace mt
