#include "core/model/model_spec.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <fstream>
#include <map>
#include <sstream>

#include "core/layers/layer_registry.h"
#include "core/model/presets.h"

namespace mt {
namespace {

class CollectErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (first.empty())
      first = "line " + std::to_string(line + 1) + ", column " + std::to_string(column + 1) + ": " +
              message;
  }
  std::string first;
};

}  // namespace

proto::ModelSpec ParseModelSpec(const std::string& text, const std::string& origin) {
  proto::ModelSpec spec;
  google::protobuf::TextFormat::Parser parser;
  CollectErrors errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, &spec))
    throw ModelSpecError("model spec " + origin + ": " +
                         (errors.first.empty() ? "parse error" : errors.first));
  if (!spec.has_input() || spec.input().channels() <= 0 || spec.input().height() <= 0 ||
      spec.input().width() <= 0)
    throw ModelSpecError("model spec " + origin +
                         ": needs input { channels: C height: H width: W } with positive sizes");
  if (spec.layer_size() == 0) throw ModelSpecError("model spec " + origin + ": no layers");
  return spec;
}

proto::ModelSpec LoadModelSpec(const std::string& name_or_path) {
  if (const char* preset = PresetSpecText(name_or_path))
    return ParseModelSpec(preset, name_or_path);
  std::ifstream in(name_or_path);
  if (!in) {
    std::string known;
    for (const auto& n : PresetNames()) known += (known.empty() ? "" : ", ") + n;
    throw ModelSpecError("model '" + name_or_path + "': not a preset (" + known +
                         ") and not a readable file");
  }
  std::stringstream text;
  text << in.rdbuf();
  return ParseModelSpec(text.str(), name_or_path);
}

std::string ModelSpecToText(const proto::ModelSpec& spec) {
  std::string out;
  google::protobuf::TextFormat::PrintToString(spec, &out);
  return out;
}

namespace {

// Layer i's inputs as layer indices (-1: the model's input), from the names
// the spec gives; none given means the previous layer.
std::vector<std::vector<int>> ResolveInputs(const proto::ModelSpec& spec) {
  std::map<std::string, int> index;
  std::vector<std::vector<int>> inputs(spec.layer_size());
  for (int i = 0; i < spec.layer_size(); ++i) {
    const proto::Layer& l = spec.layer(i);
    const std::string where = "model " + spec.name() + ", layer " + std::to_string(i + 1) +
                              (l.name().empty() ? "" : " (" + l.name() + ")");
    for (const std::string& from : l.inputs()) {
      if (from == "input") {
        inputs[i].push_back(-1);
        continue;
      }
      const auto it = index.find(from);
      if (it == index.end())
        throw ModelSpecError(where + ": input '" + from +
                             "' is not the name of an earlier layer (or \"input\")");
      inputs[i].push_back(it->second);
    }
    if (l.name().empty()) continue;
    if (l.name() == "input")
      throw ModelSpecError(where + ": \"input\" names the model's input, not a layer");
    if (!index.emplace(l.name(), i).second)
      throw ModelSpecError(where + ": another layer is already named '" + l.name() +
                           "'; names must be unique");
  }
  return inputs;
}

}  // namespace

std::unique_ptr<Model> BuildModel(const proto::ModelSpec& spec, kernels::Backend& backend,
                                  std::vector<kernels::Backend*> placement,
                                  const std::vector<std::string>& frozen) {
  std::vector<std::unique_ptr<Layer>> layers;
  for (int i = 0; i < spec.layer_size(); ++i) {
    const proto::Layer& l = spec.layer(i);
    try {
      layers.push_back(MakeLayer(l));
    } catch (const std::invalid_argument& e) {
      throw ModelSpecError("model " + spec.name() + ", layer " + std::to_string(i + 1) +
                           (l.name().empty() ? "" : " (" + l.name() + ")") + ": " + e.what());
    }
    layers.back()->set_name(l.name());
  }
  for (const std::string& name : frozen) {
    bool found = false;
    for (auto& layer : layers)
      if (layer->name() == name) {
        layer->set_frozen(true);
        found = true;
      }
    if (!found) {
      std::string names;
      for (const auto& layer : layers)
        if (!layer->name().empty()) names += (names.empty() ? "" : ", ") + layer->name();
      throw ModelSpecError("model " + spec.name() + ": no layer named '" + name +
                           "' to freeze (layers: " + names + ")");
    }
  }
  std::vector<std::vector<int>> inputs = ResolveInputs(spec);
  const Shape input = SpecInputShape(spec);
  try {
    return std::make_unique<Model>(input, std::move(layers), backend, std::move(placement),
                                   std::move(inputs));
  } catch (const std::invalid_argument& e) {
    throw ModelSpecError("model " + spec.name() + ": " + e.what());
  }
}

PixelScaling SpecPixelScaling(const proto::ModelSpec& spec) {
  if (spec.input_mean_size() == 0 && spec.input_std_size() == 0) return PixelScaling{};
  try {
    return PixelScaling::FromMeanStd({spec.input_mean().begin(), spec.input_mean().end()},
                                     {spec.input_std().begin(), spec.input_std().end()},
                                     spec.input().channels());
  } catch (const std::invalid_argument& e) {
    throw ModelSpecError("model " + spec.name() + ": " + e.what());
  }
}

Shape SpecInputShape(const proto::ModelSpec& spec) {
  return Shape{spec.input().channels(), spec.input().height(), spec.input().width()};
}

}  // namespace mt
