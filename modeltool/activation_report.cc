#include "modeltool/activation_report.h"

#include <cstdio>
#include <memory>
#include <string>

#include "core/model/model_spec.h"
#include "core/profile/memory_breakdown.h"
#include "kernels/cpu/cpu_backend.h"

namespace mt {
namespace {

using nlohmann::json;

std::unique_ptr<Model> Planned(const proto::ModelSpec& spec, kernels::Backend& cpu, bool recompute,
                               ActivationPrecision precision) {
  auto model = BuildModel(spec, cpu);
  model->SetActivationPrecision(precision);
  model->SetRecompute(recompute);
  return model;
}

const char* KeptName(Model::Kept kept, ActivationPrecision precision) {
  switch (kept) {
    case Model::Kept::kNothing: return "-";
    case Model::Kept::kFloats: return "fp32";
    case Model::Kept::kHalves: return ActivationPrecisionName(precision);
    case Model::Kept::kReplayed: return "replayed";
  }
  return "?";
}

}  // namespace

json KeptPerLayer(const proto::ModelSpec& spec, bool recompute, ActivationPrecision precision) {
  kernels::CpuBackend cpu(1);
  const auto model = Planned(spec, cpu, recompute, precision);
  json rows = json::array();
  for (size_t i = 0; i < model->layers().size(); ++i) {
    const Layer& layer = *model->layers()[i];
    const double kib = static_cast<double>(model->layer_output_shape(i).count()) * 4 / 1024;
    const Model::Kept kept = model->KeptOutput(i);
    std::string what = KeptName(kept, precision);
    if (layer.absorbed_by())
      what = "fused into " + layer.absorbed_by()->name();
    else if (model->OutputInPlace(i))
      what = "in place";
    const double kept_kib = model->OutputInPlace(i) || layer.absorbed_by() ? 0.0
                            : kept == Model::Kept::kFloats                 ? kib
                            : kept == Model::Kept::kHalves                 ? kib / 2
                                                                           : 0.0;
    rows.push_back(
        {{"layer", layer.name()}, {"output_kib", kib}, {"kept", what}, {"kept_kib", kept_kib}});
  }
  return rows;
}

json PerSampleBySetting(const proto::ModelSpec& spec) {
  kernels::CpuBackend cpu(1);
  json table = json::object();
  for (const auto& [word, precision] : ActivationPrecisionWords()) {
    json row = json::object();
    for (const bool recompute : {false, true}) {
      const auto model = Planned(spec, cpu, recompute, precision);
      row[recompute ? "recompute" : "kept"] =
          static_cast<double>(PredictBytesPerSample(*model)) / 1024;
    }
    table[word] = row;
  }
  return table;
}

void PrintKeptPerLayer(const json& rows) {
  std::printf("\nwhat the plan keeps of each layer's output for the backward pass, per sample:\n");
  std::printf("%-16s  %11s  %-22s  %9s\n", "layer", "output KiB", "kept", "kept KiB");
  double total = 0;
  for (const json& r : rows) {
    total += r["kept_kib"].get<double>();
    std::printf("%-16s  %11.1f  %-22s  %9.1f\n", r["layer"].get<std::string>().c_str(),
                r["output_kib"].get<double>(), r["kept"].get<std::string>().c_str(),
                r["kept_kib"].get<double>());
  }
  std::printf("%-16s  %11s  %-22s  %9.1f\n", "(all)", "", "", total);
}

void PrintPerSampleBySetting(const json& table, bool recompute, ActivationPrecision precision) {
  std::printf(
      "\nKiB per sample by setting (what each more sample costs: activations, their gradients, "
      "masks, the batch; the figure the batch caps divide by; * this run's):\n");
  std::printf("%-10s", "");
  for (const auto& [word, p] : ActivationPrecisionWords()) std::printf("  %10s", word.c_str());
  std::printf("\n");
  for (const bool r : {false, true}) {
    std::printf("%-10s", r ? "recompute" : "keep");
    for (const auto& [word, p] : ActivationPrecisionWords()) {
      const bool mine = r == recompute && p == precision;
      std::printf("  %9.1f%s", table[word][r ? "recompute" : "kept"].get<double>(),
                  mine ? "*" : " ");
    }
    std::printf("\n");
  }
}

}  // namespace mt
