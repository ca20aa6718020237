#include "core/train/run_summary.h"

#include "core/util/atomic_file.h"
#include "core/util/build_target.h"
#include "core/util/process_stats.h"

namespace mt {

ReportJson EvalHistoryJson(const std::vector<EvalPoint>& points) {
  ReportJson out = ReportJson::array();
  for (const EvalPoint& e : points)
    out.push_back({{"step", e.step},
                   {"seconds", e.seconds},
                   {"samples", e.samples},
                   {"test_accuracy", e.test_accuracy},
                   {"test_loss", e.test_loss}});
  return out;
}

ReportJson RunSummary::ToJson() const {
  ReportJson r;
  r["mode"] = mode;
  r["model"] = model;
  r["dataset"] = dataset;
  r["device"] = device;
  r["arch"] = kBuildArch;
  r["simd"] = kBuildSimd;
  r["placement"] = placement;
  r["threads"] = threads;
  r["optimizer"] = optimizer;
  r["lr"] = lr;
  r["seed"] = seed;
  r["parameters"] = parameters;
  r["steps"] = steps;
  r["samples"] = samples;
  r["train_seconds"] = train_seconds;
  r["samples_per_second"] = train_seconds > 0 ? static_cast<double>(samples) / train_seconds : 0.0;
  r["peak_rss_bytes"] = PeakRssBytes();
  r["resumed_from_step"] = resumed_from_step;
  r["stopped_early"] = stopped_early;
  r["stop_reason"] = stop_reason;
  r["test_accuracy"] = test_accuracy;
  r["test_loss"] = test_loss;
  r["train_loss"] = train_loss;
  r["last_step_loss"] = last_step_loss;
  ReportJson per_epoch = ReportJson::array();
  for (const auto& e : epochs)
    per_epoch.push_back({{"epoch", e.epoch},
                         {"step", e.step},
                         {"complete", e.complete},
                         {"train_loss", e.train_loss},
                         {"test_loss", e.test_loss},
                         {"test_accuracy", e.test_accuracy},
                         {"samples", e.samples},
                         {"train_seconds", e.train_seconds}});
  r["epochs"] = std::move(per_epoch);
  r["eval_history"] = EvalHistoryJson(eval_history);
  r["target_accuracy"] = target_accuracy;
  r["seconds_to_target"] = seconds_to_target;
  r["step_to_target"] = step_to_target;
  for (const auto& [key, value] : details.items()) r[key] = value;
  return r;
}

std::string RunSummary::ModelNote() const {
  ReportJson note = {{"mode", mode},
                     {"dataset", dataset},
                     {"steps", steps},
                     {"samples", samples},
                     {"epochs", static_cast<int64_t>(epochs.size())},
                     {"optimizer", optimizer},
                     {"lr", lr},
                     {"seed", seed},
                     {"test_accuracy", test_accuracy},
                     {"test_loss", test_loss}};
  for (const char* key : {"augment", "class_names", "workers_joined", "differential_privacy"})
    if (details.contains(key)) note[key] = details[key];
  return note.dump();
}

void RunSummary::Write(const std::string& path) const {
  WriteFileAtomically(path, ToJson().dump(2) + "\n");
}

}  // namespace mt
