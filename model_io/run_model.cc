#include "model_io/run_model.h"

#include <ctime>
#include <filesystem>
#include <system_error>

#include "model_io/weights_fit.h"

namespace mt {

RunModel LoadRunModel(const std::string& model, const FineTuning& tuning) {
  LoadedModel loaded = LoadModelFile(model);
  RunModel run;
  run.spec = std::move(loaded.spec);
  run.warnings = std::move(loaded.warnings);
  const std::filesystem::path file(model);
  std::error_code ec;
  run.label = std::filesystem::is_regular_file(file, ec) ? file.stem().string() : run.spec.name();
  run.frozen = FrozenLayers(run.spec, tuning);
  if (!tuning.init_from.empty()) {
    LoadedModel from = LoadModelFile(tuning.init_from);
    if (!from.weights)
      throw std::invalid_argument("--init-from " + tuning.init_from +
                                  ": holds no weights (a text spec or preset); give an .onnx "
                                  "or .mtc file");
    const BuiltModel into = BuildOnCpu(run.spec), source = BuildOnCpu(from.spec);
    const std::string origin = "--init-from " + tuning.init_from;
    CheckSameLayout(*into.model, run.spec, *source.model, origin);
    CheckWeightsFit(*into.model, run.spec, *from.weights, origin);
    run.initial = std::move(from.weights);
    run.initial_origin = tuning.init_from;
  } else if (loaded.weights) {
    run.initial = std::move(loaded.weights);
    run.initial_origin = model;
  }
  return run;
}

std::string FitOutputsToClasses(RunModel& run, int classes,
                                const std::vector<std::string>& class_names) {
  if (classes <= 0 || run.spec.layer_size() == 0) return "";
  proto::Layer& last = *run.spec.mutable_layer(run.spec.layer_size() - 1);
  int outputs = BuildOnCpu(run.spec).model->num_classes();
  std::string note;
  if (outputs != classes && !run.initial && last.has_dense()) {
    last.mutable_dense()->set_units(classes);
    note = "model " + run.spec.name() + ": " + std::to_string(classes) + " outputs (layer " +
           last.name() + "), one per class of the dataset, instead of " + std::to_string(outputs);
    outputs = classes;
  } else if (outputs > classes) {
    run.warnings.push_back("model " + run.label + " has " + std::to_string(outputs) +
                           " outputs but the dataset " + std::to_string(classes) +
                           " classes: the other " + std::to_string(outputs - classes) +
                           " outputs never match a label");
  }
  if (static_cast<int>(class_names.size()) == outputs) {
    run.spec.clear_class_names();
    for (const std::string& name : class_names) run.spec.add_class_names(name);
  }
  return note;
}

ModelWeights WeightsOf(const Model& model) {
  ModelWeights w;
  w.params.resize(model.ParamCount());
  w.running_stats.resize(model.RunningStatCount());
  model.GetParams(w.params.data());
  model.GetRunningStats(w.running_stats.data());
  return w;
}

void SetWeights(Model& model, const ModelWeights& weights) {
  model.SetParams(weights.params.data());
  model.SetRunningStats(weights.running_stats.data());
}

std::string FinalModelPath(const std::string& export_path, const std::string& run_dir,
                           const std::string& state_dir, const std::string& model_name) {
  if (!export_path.empty()) return export_path;
  if (!run_dir.empty()) return run_dir + "/final.onnx";
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &utc);
  return state_dir + "/models/" + (model_name.empty() ? "model" : model_name) + "-" + stamp +
         ".onnx";
}

SavedModel SaveFinalModel(const std::string& path, const proto::ModelSpec& spec, const Model& model,
                          const ModelMetadata& metadata) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec)
    throw std::runtime_error("cannot create " + parent.string() +
                             " for the final model: " + ec.message());
  return SaveModelFile(path, spec, WeightsOf(model), metadata);
}

}  // namespace mt
