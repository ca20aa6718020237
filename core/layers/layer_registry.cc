#include "core/layers/layer_registry.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>

namespace mt {
namespace {

std::map<int, LayerKind>& Entries() {
  static std::map<int, LayerKind> entries;
  return entries;
}

}  // namespace

std::string LayerKindName(proto::Layer::KindCase kind) {
  const auto* field = proto::Layer::descriptor()->FindFieldByNumber(static_cast<int>(kind));
  return field ? field->name() : "kind #" + std::to_string(static_cast<int>(kind));
}

bool RegisterLayerKind(LayerKind entry) {
  const int key = static_cast<int>(entry.kind);
  if (!Entries().emplace(key, std::move(entry)).second) {
    std::fprintf(stderr, "mt: layer kind %s registered twice\n",
                 LayerKindName(static_cast<proto::Layer::KindCase>(key)).c_str());
    std::abort();
  }
  return true;
}

const LayerKind* FindLayerKind(proto::Layer::KindCase kind) {
  const auto it = Entries().find(static_cast<int>(kind));
  return it == Entries().end() ? nullptr : &it->second;
}

std::vector<const LayerKind*> LayerKinds() {
  std::vector<const LayerKind*> kinds;
  for (const auto& entry : Entries()) kinds.push_back(&entry.second);
  return kinds;
}

const LayerKind& LayerKindOf(const proto::Layer& layer) {
  if (const LayerKind* entry = FindLayerKind(layer.kind_case()); entry && entry->make)
    return *entry;
  std::string known;
  for (const LayerKind* k : LayerKinds())
    known += (known.empty() ? "" : ", ") + LayerKindName(k->kind);
  if (layer.kind_case() == proto::Layer::KIND_NOT_SET)
    throw std::invalid_argument("no layer kind given (" + known + ")");
  throw std::invalid_argument("layer kind " + LayerKindName(layer.kind_case()) +
                              " has no registry entry (kinds: " + known + ")");
}

std::unique_ptr<Layer> MakeLayer(const proto::Layer& layer) {
  return LayerKindOf(layer).make(layer);
}

}  // namespace mt
