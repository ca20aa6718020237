#include "hub/monitor/prometheus_text.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

namespace mt {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[32];
  // Whole numbers (counters, most gauges) print as integers; the rest with
  // enough digits to read back the same double.
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    return buf;
  }
  // The fewest digits that read back as the same double ("0.0025", not
  // "0.0025000000000000001").
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

// Backslashes and newlines escaped, and double quotes too in a label value
// (HELP text keeps them as they are).
std::string Escape(const std::string& text, bool quotes) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else if (c == '"' && quotes)
      out += "\\\"";
    else
      out += c;
  }
  return out;
}

class Exposition {
 public:
  void Family(const std::string& name, const char* type, const std::string& help) {
    out_ += "# HELP " + name + " " + Escape(help, false) + "\n";
    out_ += "# TYPE " + name + " " + type + "\n";
  }
  void Sample(const std::string& name, const Labels& labels, double value) {
    out_ += name;
    if (!labels.empty()) {
      out_ += '{';
      for (size_t i = 0; i < labels.size(); ++i) {
        if (i) out_ += ',';
        out_ += labels[i].first + "=\"" + EscapeLabelValue(labels[i].second) + "\"";
      }
      out_ += '}';
    }
    out_ += ' ' + FormatValue(value) + '\n';
  }
  // A family of one sample without labels.
  void Single(const std::string& name, const char* type, const std::string& help, double value) {
    Family(name, type, help);
    Sample(name, {}, value);
  }
  void Histogram(const std::string& name, const std::string& help, const FixedHistogram& h) {
    Family(name, "histogram", help);
    const std::vector<int64_t> cumulative = h.Cumulative();
    for (size_t i = 0; i < cumulative.size(); ++i)
      Sample(name + "_bucket", {{"le", FormatValue(h.bounds()[i])}},
             static_cast<double>(cumulative[i]));
    Sample(name + "_bucket", {{"le", "+Inf"}}, static_cast<double>(h.count()));
    Sample(name + "_sum", {}, h.sum());
    Sample(name + "_count", {}, static_cast<double>(h.count()));
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

Labels WorkerLabels(const WorkerRow& w) {
  return {{"worker", w.name}, {"id", std::to_string(w.id)}};
}

// A per-worker family; `value` returns false where the worker has no value.
template <class Get>
void PerWorker(Exposition& e, const StatusSnapshot& s, const std::string& name, const char* type,
               const std::string& help, Get value) {
  e.Family(name, type, help);
  for (const WorkerRow& w : s.workers) {
    double v = 0;
    if (value(w, v)) e.Sample(name, WorkerLabels(w), v);
  }
}

void RunFamilies(Exposition& e, const StatusSnapshot& s) {
  e.Family("mt_hub_info", "gauge", "the run: model, dataset and gradient compression (always 1)");
  e.Sample("mt_hub_info",
           {{"model", s.run.model}, {"dataset", s.run.dataset}, {"compression", s.run.compression}},
           1);
  e.Family("mt_hub_state", "gauge", "1 for the run's state: waiting, training or finished");
  for (const char* state : {"waiting", "training", "finished"})
    e.Sample("mt_hub_state", {{"state", state}}, s.state == state ? 1 : 0);
  e.Single("mt_hub_uptime_seconds", "gauge", "seconds since the hub started", s.uptime_seconds);
  e.Single("mt_hub_steps_total", "counter", "optimizer steps applied to the master weights",
           static_cast<double>(s.step));
  e.Single("mt_hub_steps_planned", "gauge", "steps the run ends at",
           static_cast<double>(s.run.total_steps));
  e.Single("mt_hub_samples_total", "counter", "training samples in the applied steps",
           static_cast<double>(s.samples));
  e.Single("mt_hub_epoch", "gauge", "the epoch in progress (1-based)",
           static_cast<double>(s.epoch));
  if (s.loss) e.Single("mt_hub_loss", "gauge", "mean training loss of the last step", *s.loss);
  if (s.test_accuracy)
    e.Single("mt_hub_test_accuracy", "gauge", "test accuracy at the last evaluation",
             *s.test_accuracy);
  if (s.test_loss)
    e.Single("mt_hub_test_loss", "gauge", "test loss at the last evaluation", *s.test_loss);
  e.Single("mt_hub_samples_per_second", "gauge", "training samples per second, recent",
           s.samples_per_second);
  e.Single("mt_hub_eta_seconds", "gauge", "seconds to the run's last step at the recent pace",
           s.eta_seconds);
  e.Single("mt_hub_sync_every", "gauge", "local steps per exchange (--sync-every; 1: every step)",
           s.sync_every);
  if (s.privacy) {
    e.Single("mt_hub_dp_epsilon", "gauge",
             "differential privacy spent so far (epsilon at mt_hub_dp_delta)", s.privacy->epsilon);
    e.Single("mt_hub_dp_delta", "gauge", "the delta epsilon is stated at", s.privacy->delta);
    e.Single("mt_hub_dp_noise_multiplier", "gauge",
             "noise standard deviation on the sum over the clip", s.privacy->noise_multiplier);
    e.Single("mt_hub_dp_rounds_total", "counter", "rounds released under differential privacy",
             static_cast<double>(s.privacy->rounds));
  }
  e.Single("mt_hub_bytes_in_total", "counter",
           "gradient payload bytes received from workers (headers excluded)",
           static_cast<double>(s.gradient_bytes_in));
  e.Single("mt_hub_bytes_out_total", "counter",
           "result payload bytes sent to workers (headers excluded)",
           static_cast<double>(s.result_bytes_out));
  e.Single("mt_hub_events_total", "counter",
           "membership and run events (as in --events; batch changes and per-step events left out)",
           static_cast<double>(s.events_total));
  e.Histogram("mt_hub_step_seconds",
              "wall time of each exchange: a step, or a round of --sync-every local steps",
              s.step_seconds);
  e.Histogram("mt_hub_barrier_wait_seconds",
              "per exchange, from the first worker's whole gradient to the step's close: how "
              "long the quickest worker waited for the slowest or the deadline",
              s.barrier_wait_seconds);
}

void WorkerFamilies(Exposition& e, const StatusSnapshot& s) {
  e.Single("mt_hub_workers_expected", "gauge", "workers the run waits for (--workers)",
           s.run.workers_expected);
  e.Family("mt_hub_workers", "gauge", "workers by state");
  for (const char* state : {"joined", "waiting", "active", "late", "gone"}) {
    int n = 0;
    for (const WorkerRow& w : s.workers) n += w.state == state;
    e.Sample("mt_hub_workers", {{"state", state}}, n);
  }
  e.Family("mt_hub_worker_state", "gauge", "1 for each worker's state");
  for (const WorkerRow& w : s.workers) {
    Labels labels = WorkerLabels(w);
    labels.emplace_back("state", w.state);
    e.Sample("mt_hub_worker_state", labels, 1);
  }
  const auto i64 = [](int64_t WorkerRow::*field) {
    return [field](const WorkerRow& w, double& v) {
      v = static_cast<double>(w.*field);
      return true;
    };
  };
  PerWorker(e, s, "mt_hub_worker_steps_total", "counter", "steps the worker took part in",
            i64(&WorkerRow::steps));
  PerWorker(e, s, "mt_hub_worker_samples_total", "counter", "samples the worker computed",
            i64(&WorkerRow::samples));
  PerWorker(e, s, "mt_hub_worker_bytes_in_total", "counter",
            "gradient payload bytes received from the worker", i64(&WorkerRow::bytes_in));
  PerWorker(e, s, "mt_hub_worker_bytes_out_total", "counter",
            "result payload bytes sent to the worker", i64(&WorkerRow::bytes_out));
  PerWorker(e, s, "mt_hub_worker_left_out_total", "counter",
            "steps that went on without the worker (missed deadlines)",
            i64(&WorkerRow::left_out_events));
  PerWorker(e, s, "mt_hub_worker_rejoins_total", "counter",
            "times the worker came back after being left out", i64(&WorkerRow::back_events));
  PerWorker(e, s, "mt_hub_worker_resyncs_total", "counter",
            "times the worker's weights differed and it got the full model",
            i64(&WorkerRow::resyncs));
  PerWorker(e, s, "mt_hub_worker_batch", "gauge", "the worker's batch in the latest step",
            [](const WorkerRow& w, double& v) { return v = w.batch, true; });
  PerWorker(e, s, "mt_hub_worker_ms_per_sample", "gauge",
            "the batch controller's estimate of the worker's milliseconds per sample",
            [](const WorkerRow& w, double& v) { return v = w.ms_per_sample, true; });
  PerWorker(e, s, "mt_hub_worker_battery_percent", "gauge",
            "battery charge the worker reported (only workers that report one)",
            [](const WorkerRow& w, double& v) {
              if (w.battery_percent) v = *w.battery_percent;
              return w.battery_percent.has_value();
            });
  PerWorker(e, s, "mt_hub_worker_charging", "gauge",
            "1 while the worker reports charging (only workers that report it)",
            [](const WorkerRow& w, double& v) {
              if (w.charging) v = *w.charging ? 1 : 0;
              return w.charging.has_value();
            });
  PerWorker(e, s, "mt_hub_worker_temperature_celsius", "gauge",
            "device temperature the worker reported (only workers that report one)",
            [](const WorkerRow& w, double& v) {
              if (w.temperature_c) v = *w.temperature_c;
              return w.temperature_c.has_value();
            });
}

}  // namespace

std::string EscapeLabelValue(const std::string& value) { return Escape(value, true); }

std::string PrometheusText(const StatusSnapshot& s) {
  Exposition e;
  RunFamilies(e, s);
  WorkerFamilies(e, s);
  return e.Take();
}

}  // namespace mt
