// TrainingProfiler::Table: the report's figures (ToJson) laid out for a log,
// so the two cannot disagree.
#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <string>

#include "core/profile/training_profiler.h"

namespace mt {
namespace {

void Append(std::string& out, const char* format, ...) {
  char line[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(line, sizeof line, format, args);
  va_end(args);
  out += line;
}

// 1234567 bytes -> "1.2 MiB".
std::string Bytes(const ReportJson& v) {
  if (v.is_null()) return "unknown";
  const double b = v.get<double>();
  char text[32];
  if (std::abs(b) >= (1 << 20))
    std::snprintf(text, sizeof text, "%.1f MiB", b / (1 << 20));
  else
    std::snprintf(text, sizeof text, "%.0f KiB", b / 1024);
  return text;
}

}  // namespace

std::string TrainingProfiler::Table() const {
  const ReportJson j = ToJson();
  const ReportJson& p = j["profile"];
  std::string out;
  Append(out, "profile: %lld steps after %lld warm-up, mean batch %.1f, %d thread(s)\n",
         p["steps"].get<long long>(), p["warmup_steps"].get<long long>(),
         p["mean_batch"].get<double>(), setup_.threads);
  int name_w = 5, type_w = 4;
  for (const auto& l : j["layers"]) {
    name_w = std::max(name_w, static_cast<int>(l["name"].get<std::string>().size()));
    type_w = std::max(type_w, static_cast<int>(l["type"].get<std::string>().size()));
  }
  Append(out, "%-*s  %-*s  %-7s  %8s  %8s  %6s  %8s  %8s  %6s  %9s  %9s\n", name_w, "layer", type_w,
         "type", "backend", "fwd ms", "bwd ms", "% pass", "GFLOP", "GFLOP/s", "% peak", "params",
         "act KiB");
  for (const auto& l : j["layers"]) {
    if (!l["fused_into"].is_null()) {
      Append(out, "%-*s  %-*s  %-7s  fused into %s (its time is that layer's)\n", name_w,
             l["name"].get<std::string>().c_str(), type_w, l["type"].get<std::string>().c_str(),
             l["backend"].get<std::string>().c_str(), l["fused_into"].get<std::string>().c_str());
      continue;
    }
    Append(out, "%-*s  %-*s  %-7s  %8.3f  %8.3f  %6.1f  %8.4f  %8.2f  %6.1f  %9lld  %9lld\n",
           name_w, l["name"].get<std::string>().c_str(), type_w,
           l["type"].get<std::string>().c_str(), l["backend"].get<std::string>().c_str(),
           l["forward_ms"].get<double>(), l["backward_ms"].get<double>(),
           100 * l["share_of_pass"].get<double>(), l["gflops"].get<double>(),
           l["gflops_per_s"].get<double>(), 100 * l["peak_share"].get<double>(),
           l["params"].get<long long>(), l["activation_bytes"].get<long long>() / 1024);
  }
  const double pass = p["pass_ms"].get<double>(), accounted = p["layers_ms"].get<double>();
  Append(out,
         "loss %.3f ms, transfers %.3f ms; layers, loss and transfers %.3f ms of the pass's "
         "%.3f ms (%.1f%%)\n",
         p["loss_ms"].get<double>(), p["transfer_ms"].get<double>(), accounted, pass,
         pass > 0 ? 100 * accounted / pass : 0.0);
  Append(out, "step %.3f ms: pass %.3f, batch in %.3f, optimizer %.3f\n",
         p["step_ms"].get<double>(), pass, p["data_ms"].get<double>(),
         p["optimizer_ms"].get<double>());
  for (const auto& peak : p["peaks"])
    Append(out, "peak of %s: %.1f GFLOP/s (%s)\n", peak["backend"].get<std::string>().c_str(),
           peak["gflops_per_s"].get<double>(), peak["method"].get<std::string>().c_str());
  const ReportJson& m = j["memory"];
  Append(out,
         "memory at batch %d: weights %s, gradients %s, optimizer %s, running stats %s, "
         "activations %s, workspaces %s, batch %s: model %s\n",
         capacity_, Bytes(m["weights"]).c_str(), Bytes(m["gradients"]).c_str(),
         Bytes(m["optimizer"]).c_str(), Bytes(m["running_stats"]).c_str(),
         Bytes(m["activations"]).c_str(), Bytes(m["workspaces"]).c_str(), Bytes(m["batch"]).c_str(),
         Bytes(m["model_total"]).c_str());
  Append(out,
         "memory of the process: baseline %s + datasets %s + model = predicted %s; peak RSS %s",
         Bytes(m["baseline_rss"]).c_str(), Bytes(m["datasets"]).c_str(),
         Bytes(m["predicted_total"]).c_str(), Bytes(m["peak_rss"]).c_str());
  if (!m["prediction_error"].is_null())
    Append(out, " (prediction off by %+.1f%%; unaccounted %s)",
           100 * m["prediction_error"].get<double>(), Bytes(m["unaccounted"]).c_str());
  Append(out, ", RSS now %s\n", Bytes(m["current_rss"]).c_str());
  if (j["cpu_utilisation"].is_null())
    Append(out, "CPU utilisation unknown");
  else
    Append(out, "CPU utilisation %.2f cores (%.0f%% of %d thread(s))",
           j["cpu_utilisation"].get<double>(), 100 * j["cpu_utilisation_per_thread"].get<double>(),
           setup_.threads);
  if (j["energy_joules_per_step"].is_null())
    Append(out, "; energy per step unknown (%s)\n",
           power_.available() ? "the battery is not discharging"
                              : "no battery in /sys/class/power_supply");
  else
    Append(out, "; energy per step %.3f J (whole machine, from the battery)\n",
           j["energy_joules_per_step"].get<double>());
  return out;
}

}  // namespace mt
