#include "model_io/onnx_importer.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "core/model/model_spec.h"
#include "model_io/input_scaling_metadata.h"
#include "model_io/onnx_error.h"
#include "model_io/onnx_pytorch_hints.h"
#include "model_io/weights_fit.h"

namespace mt {
namespace {

constexpr int64_t kMinOpset = 11, kMaxOpset = 17;

// Letters, digits, '_', '.' and '-' survive; PyTorch's "/layer1/conv/Conv"
// becomes "layer1_conv_Conv".
std::string Sanitize(const std::string& raw) {
  std::string s;
  for (char c : raw) {
    const bool keep =
        std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
    if (keep)
      s += c;
    else if (!s.empty() && s.back() != '_')
      s += '_';
  }
  while (!s.empty() && s.back() == '_') s.pop_back();
  return s;
}

// PyTorch names a node by the scopes of the modules around it and its op:
// "/features/features.1/body/body.0/body.0.0/Conv". Each scope is named
// relative to the nearest named one, so "body.0" refines "body" while
// "body" is a child of "features.1": the module's path, as in its weights'
// names ("features.1.body.0.0.weight") and in --freeze, is
// "features.1.body.0.0".
std::string ModulePath(const std::string& raw, const std::string& op) {
  if (raw.empty() || raw[0] != '/') return raw;
  std::vector<std::string> parts;
  for (size_t begin = 1, end; begin <= raw.size(); begin = end + 1) {
    end = raw.find('/', begin);
    if (end == std::string::npos) end = raw.size();
    if (end > begin) parts.push_back(raw.substr(begin, end - begin));
  }
  if (!parts.empty() && parts.back().rfind(op, 0) == 0) parts.pop_back();
  std::vector<std::string> path;
  for (const std::string& part : parts) {
    if (!path.empty() && part.rfind(path.back() + ".", 0) == 0)
      path.back() = part;
    else
      path.push_back(part);
  }
  std::string joined;
  for (const std::string& p : path) joined += (joined.empty() ? "" : ".") + p;
  return joined;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

OnnxImporter::OnnxImporter(const onnx::ModelProto& model, std::string origin,
                           const OnnxImportLimits& limits)
    : model_(model), origin_(std::move(origin)), budget_(limits) {}

LoadedModel OnnxImporter::Run() {
  if (!model_.has_graph() || model_.graph().node_size() == 0)
    throw OnnxError(origin_ + ": the ONNX model has no graph (empty or truncated file?)");
  CheckOnnxNodeCount(origin_, model_.graph().node_size(), budget_.limits());
  for (int i = 0; i < model_.graph().node_size(); ++i) {
    const onnx::NodeProto& node = model_.graph().node(i);
    if (node.input_size() > budget_.limits().max_node_inputs)
      OnnxNode(node, i, origin_)
          .Fail("has " + std::to_string(node.input_size()) + " inputs, more than the " +
                std::to_string(budget_.limits().max_node_inputs) + " any op mt imports takes");
  }
  bool has_opset = false;
  for (const auto& o : model_.opset_import()) {
    if (!o.domain().empty() && o.domain() != "ai.onnx") continue;
    has_opset = true;
    if (o.version() < kMinOpset || o.version() > kMaxOpset)
      throw OnnxError(origin_ + ": opset " + std::to_string(o.version()) +
                      " is not supported (mt reads opsets " + std::to_string(kMinOpset) + " to " +
                      std::to_string(kMaxOpset) + "; export with opset_version=13)");
  }
  if (!has_opset) throw OnnxError(origin_ + ": the model imports no default-domain opset");
  const std::string graph_name = Sanitize(model_.graph().name());
  spec_.set_name(graph_name.empty() ? "onnx" : graph_name);
  ReadConstants();
  ReadInput();
  ImportNodes();
  ReadOutput();
  LoadedModel loaded;
  loaded.weights = CheckAgainstModel();
  ReadClassNames(loaded.warnings);
  ReadInputScaling();
  loaded.spec = spec_;
  loaded.origin = origin_;
  return loaded;
}

void OnnxImporter::ReadConstants() {
  for (const onnx::TensorProto& t : model_.graph().initializer()) {
    const std::string what = origin_ + ": initializer '" + t.name() + "'";
    budget_.ChargeConstant(what, TensorElements(t, what), DecodedElementBytes(t));
    constants_[t.name()] = std::make_shared<const OnnxConstant>(DecodeTensor(t, what));
  }
  for (const onnx::NodeProto& node : model_.graph().node())
    for (const std::string& in : node.input())
      if (!in.empty()) ++readers_[in];
  for (const onnx::ValueInfoProto& out : model_.graph().output()) ++readers_[out.name()];
}

void OnnxImporter::ReadInput() {
  std::vector<const onnx::ValueInfoProto*> inputs;
  // Older exporters list the initializers among the inputs too.
  for (const onnx::ValueInfoProto& in : model_.graph().input())
    if (!constants_.count(in.name())) inputs.push_back(&in);
  if (inputs.size() != 1)
    throw OnnxError(origin_ + ": the graph has " + std::to_string(inputs.size()) +
                    " inputs besides its weights; mt models take one image tensor [N, C, H, W]");
  const onnx::ValueInfoProto& in = *inputs[0];
  const std::string what = origin_ + ": graph input '" + in.name() + "'";
  if (!in.type().has_tensor_type() ||
      in.type().tensor_type().elem_type() != onnx::TensorProto::FLOAT)
    throw OnnxError(what + ": must be a FLOAT tensor");
  const auto& shape = in.type().tensor_type().shape();
  if (shape.dim_size() != 4)
    throw OnnxError(what + ": has rank " + std::to_string(shape.dim_size()) +
                    "; mt models take [N, C, H, W] images");
  int chw[3];
  for (int i = 1; i < 4; ++i) {
    const auto& d = shape.dim(i);
    if (!d.has_dim_value() || d.dim_value() <= 0 || d.dim_value() > (1 << 20))
      throw OnnxError(what + ": dimension " + std::to_string(i) +
                      " must be a fixed positive size (only the batch dimension may be symbolic)");
    chw[i - 1] = static_cast<int>(d.dim_value());
  }
  spec_.mutable_input()->set_channels(chw[0]);
  spec_.mutable_input()->set_height(chw[1]);
  spec_.mutable_input()->set_width(chw[2]);
  values_[in.name()] = ImportedValue{"input", -1, false, false};
  if (in.name() != "input") spec_.set_input_name(in.name());  // kept for the export
}

void OnnxImporter::ImportNodes() {
  // Every node whose op mt lacks, in one message, before any is translated:
  // a user learns all that stands between the model and mt at once.
  std::string unsupported;
  int count = 0, index = 0;
  for (const onnx::NodeProto& node : model_.graph().node()) {
    const OnnxNode n(node, index++, origin_);
    const bool foreign = !node.domain().empty() && node.domain() != "ai.onnx";
    if (!foreign && OnnxOpKnown(node.op_type())) continue;
    ++count;
    unsupported +=
        "\n  " + n.Label() + (foreign ? " (op domain '" + node.domain() + "')" : std::string());
  }
  if (count > 0)
    throw OnnxError(origin_ + ": " + std::to_string(count) + " node" + (count > 1 ? "s" : "") +
                    " of an op type that is not supported:" + unsupported +
                    PyTorchHints(model_.graph()) +
                    "\nsupported (as layers that train): " + SupportedLayerOpsText());
  index = 0;
  for (const onnx::NodeProto& node : model_.graph().node())
    ImportOnnxNode(*this, OnnxNode(node, index++, origin_));
}

void OnnxImporter::ReadOutput() {
  const auto& outputs = model_.graph().output();
  if (outputs.size() != 1)
    throw OnnxError(origin_ + ": the graph has " + std::to_string(outputs.size()) +
                    " outputs; mt models have one, the logits [N, classes]");
  const std::string& name = outputs[0].name();
  const auto it = values_.find(name);
  if (it == values_.end() || it->second.layer < 0)
    throw OnnxError(origin_ + ": the graph output '" + name + "' is made by no supported layer");
  const ImportedValue& v = it->second;
  if (!v.flat || v.pooled)
    throw OnnxError(origin_ + ": the graph output '" + name +
                    "' is not flat; mt models output logits [N, classes] (add a Flatten)");
  if (v.layer != spec_.layer_size() - 1)
    throw OnnxError(origin_ + ": the graph output '" + name + "' comes from layer '" + v.source +
                    "', but layers follow it that feed no output; mt's logits are its last "
                    "layer's output");
  if (name != spec_.layer(v.layer).name()) spec_.set_output_name(name);  // kept for the export
}

void OnnxImporter::ReadInputScaling() {
  // mt.input_mean and mt.input_std (input_scaling_metadata.h; or set by a
  // user on a PyTorch export): what training must feed the model. mt's own
  // default is left implicit, so a round trip keeps the spec as it was.
  const onnx::StringStringEntryProto *mean = nullptr, *std = nullptr;
  for (const onnx::StringStringEntryProto& p : model_.metadata_props()) {
    if (p.key() == "mt.input_mean") mean = &p;
    if (p.key() == "mt.input_std") std = &p;
  }
  if (!mean && !std) return;
  if (!mean || !std)
    throw OnnxError(origin_ + ": metadata " + (mean ? mean : std)->key() + " '" +
                    (mean ? mean : std)->value() + "' comes without " +
                    (mean ? "mt.input_std" : "mt.input_mean") +
                    "; give both (inputs are (image - mean) / std)");
  const std::vector<float> m = ParseScalingMetadata(origin_, mean->key(), mean->value()),
                           s = ParseScalingMetadata(origin_, std->key(), std->value());
  try {
    PixelScaling::FromMeanStd(m, s, spec_.input().channels());  // validates
  } catch (const std::exception& e) {
    throw OnnxError(origin_ + ": metadata mt.input_mean '" + mean->value() +
                    "' and mt.input_std '" + std->value() + "' do not fit the model's " +
                    std::to_string(spec_.input().channels()) + " input channel(s): " + e.what());
  }
  const auto half = [](float v) { return std::fabs(v - 0.5f) < 1e-6f; };
  if (std::all_of(m.begin(), m.end(), half) && std::all_of(s.begin(), s.end(), half)) return;
  for (float v : m) spec_.add_input_mean(v);
  for (float v : s) spec_.add_input_std(v);
}

void OnnxImporter::ReadClassNames(std::vector<std::string>& warnings) {
  // Ours (onnx_export.h): a JSON array with a name per output, the same
  // JSON as mt.input_mean's list. A malformed one is refused, as the
  // numbers are; names that do not match the outputs are only a label lost.
  for (const onnx::StringStringEntryProto& p : model_.metadata_props()) {
    if (p.key() != "mt.class_names") continue;
    const nlohmann::json names = nlohmann::json::parse(p.value(), nullptr, false);
    bool strings = names.is_array();
    for (const auto& n : names) strings = strings && n.is_string();
    if (!strings)
      throw OnnxError(origin_ + ": metadata mt.class_names '" + p.value().substr(0, 200) +
                      "' is not a JSON list of names, such as [\"cat\", \"dog\"]");
    const proto::Layer& last = spec_.layer(spec_.layer_size() - 1);
    const int outputs = last.has_dense() ? last.dense().units() : -1;
    if (static_cast<int>(names.size()) != outputs) {
      warnings.push_back(origin_ + ": metadata mt.class_names names " +
                         std::to_string(names.size()) + " classes but the model has " +
                         std::to_string(outputs) + " outputs; the names are left out");
      return;
    }
    for (const auto& n : names) spec_.add_class_names(n.get<std::string>());
  }
}

ModelWeights OnnxImporter::CheckAgainstModel() {
  BuiltModel built;
  try {
    built = BuildOnCpu(spec_);
  } catch (const std::exception& e) {
    throw OnnxError(origin_ + ": the imported model does not fit together: " + e.what());
  }
  const Model& model = *built.model;
  auto input_shape = [&](size_t i) {
    std::string s;
    for (int v : model.layer_inputs(i))
      s += (s.empty() ? "" : ", ") +
           (v < 0 ? model.input_shape() : model.layer_output_shape(v)).ToString();
    return s;
  };
  ModelWeights w;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Layer& l = *model.layers()[i];
    auto mismatch = [&](const char* what, size_t have, size_t need) {
      throw OnnxError(origin_ + ": " + layer_nodes_[i] + ": its " + what + " hold " +
                      std::to_string(have) + " values, but as layer '" + l.name() + "' on input " +
                      input_shape(i) + " it needs " + std::to_string(need) +
                      " (weight shapes do not fit the model)");
    };
    if (params_[i].size() != l.ParamCount()) mismatch("weights", params_[i].size(), l.ParamCount());
    if (stats_[i].size() != l.RunningStatCount())
      mismatch("running statistics", stats_[i].size(), l.RunningStatCount());
    w.params.insert(w.params.end(), params_[i].begin(), params_[i].end());
    w.running_stats.insert(w.running_stats.end(), stats_[i].begin(), stats_[i].end());
  }
  for (const CountCheck& c : count_checks_) {
    const Shape& s = c.layer < 0 ? model.input_shape() : model.layer_output_shape(c.layer);
    if (static_cast<int64_t>(s.count()) != c.count)
      throw OnnxError(origin_ + ": " + c.node + ": reshapes " + s.ToString() + " (" +
                      std::to_string(s.count()) + " values per sample) to " +
                      std::to_string(c.count) + " per sample");
  }
  return w;
}

const ImportedValue& OnnxImporter::Value(const OnnxNode& n, int i) const {
  const std::string name = n.Input(i);
  if (name.empty()) n.Fail("input #" + std::to_string(i) + " is missing");
  const auto it = values_.find(name);
  if (it != values_.end()) {
    if (it->second.zero_pad > 0)
      n.Fail("input '" + name +
             "' comes from a non-zero Pad, which mt takes only before an AveragePool (pad "
             "inside the Conv or the pooling instead)");
    return it->second;
  }
  if (constants_.count(name))
    n.Fail("input #" + std::to_string(i) + " ('" + name +
           "') is a constant where mt needs a tensor computed by the graph");
  n.Fail("input #" + std::to_string(i) + " ('" + name +
         "') is made by no earlier node and is no initializer (graph not in order, or "
         "truncated?)");
}

const ImportedValue& OnnxImporter::SpatialValue(const OnnxNode& n, int i) const {
  const ImportedValue& v = Value(n, i);
  if (v.flat)
    n.Fail("input '" + n.Input(i) + "' is " +
           (v.pooled ? "a globally pooled [N, C, 1, 1] tensor" : "flat") +
           "; this op needs [N, C, H, W] here");
  return v;
}

const ImportedValue& OnnxImporter::PaddedValue(const OnnxNode& n, int i, bool padded_ok) const {
  const auto it = values_.find(n.Input(i));
  if (padded_ok && it != values_.end() && it->second.zero_pad > 0 && !it->second.flat)
    return it->second;
  return SpatialValue(n, i);
}

const OnnxConstant& OnnxImporter::Constant(const OnnxNode& n, int i,
                                           const std::string& role) const {
  const std::string name = n.Input(i);
  if (name.empty()) n.Fail("its " + role + " (input #" + std::to_string(i) + ") is missing");
  const auto it = constants_.find(name);
  if (it != constants_.end()) return *it->second;
  if (values_.count(name))
    n.Fail("its " + role + " ('" + name +
           "') is computed by the graph; mt needs it as an initializer or Constant");
  n.Fail("its " + role + " ('" + name + "') is missing: no initializer or Constant has that name");
}

const OnnxConstant& OnnxImporter::FloatConstant(const OnnxNode& n, int i, const std::string& role,
                                                int rank) const {
  const OnnxConstant& c = Constant(n, i, role);
  if (!c.is_float) n.Fail("its " + role + " ('" + n.Input(i) + "') is not a FLOAT tensor");
  if (rank >= 0 && static_cast<int>(c.dims.size()) != rank)
    n.Fail("its " + role + " ('" + n.Input(i) + "') has shape " + DimsText(c.dims) +
           ", expected rank " + std::to_string(rank));
  return c;
}

std::string OnnxImporter::LayerName(const OnnxNode& n) {
  std::string base = Sanitize(ModulePath(n.proto().name(), n.op()));
  if (base.empty() || base == "input") base = Lower(n.op());
  return names_.Take(base);
}

void OnnxImporter::ChargeConstant(const OnnxNode& n, int64_t elements, bool is_float) {
  budget_.ChargeConstant(origin_ + ": " + n.Label(), elements, is_float ? 4 : 8);
}

void OnnxImporter::AddConstant(const std::string& tensor, OnnxConstant c) {
  constants_[tensor] = std::make_shared<const OnnxConstant>(std::move(c));
}

void OnnxImporter::ShareConstant(const OnnxNode& n) {
  constants_[n.proto().output(0)] = constants_.at(n.Input(0));
}

void OnnxImporter::ChargeWeights(const OnnxNode& n, int64_t params, int64_t running_stats) {
  budget_.ChargeWeights(origin_ + ": " + n.Label() + ": its weights", params, running_stats);
}

int OnnxImporter::AddLayer(const OnnxNode& n, proto::Layer layer,
                           const std::vector<ImportedValue>& inputs, bool flat, bool pooled,
                           std::vector<float> params, std::vector<float> stats) {
  const int index = spec_.layer_size();
  params_taken_ += params.size();
  stats_taken_ += stats.size();
  if (params_taken_ > static_cast<size_t>(budget_.params()) ||
      stats_taken_ > static_cast<size_t>(budget_.running_stats()))
    throw std::logic_error("ONNX import: the translation of " + n.Label() +
                           " made weights it did not charge (ChargeWeights)");
  layer.set_name(LayerName(n));
  // The previous layer's output (or the input, for the first) is the default.
  const bool implicit = inputs.size() == 1 && !layer.has_add() && inputs[0].layer == index - 1;
  if (!implicit)
    for (const ImportedValue& v : inputs) layer.add_inputs(v.source);
  *spec_.add_layer() = std::move(layer);
  params_.push_back(std::move(params));
  stats_.push_back(std::move(stats));
  layer_nodes_.push_back(n.Label());
  inputs_.push_back(inputs);
  values_[n.proto().output(0)] = ImportedValue{spec_.layer(index).name(), index, flat, pooled};
  return index;
}

void OnnxImporter::Alias(const OnnxNode& n, ImportedValue v) { values_[n.proto().output(0)] = v; }

int OnnxImporter::Readers(const std::string& tensor) const {
  const auto it = readers_.find(tensor);
  return it == readers_.end() ? 0 : it->second;
}

void OnnxImporter::ExpectCount(const OnnxNode& n, int layer, int64_t count) {
  count_checks_.push_back(CountCheck{n.Label(), layer, count});
}

}  // namespace mt
