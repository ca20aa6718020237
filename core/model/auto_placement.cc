#include "core/model/auto_placement.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "core/model/model_spec.h"

namespace mt {
namespace {

using Clock = std::chrono::steady_clock;

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::unique_ptr<Model> Prepared(const proto::ModelSpec& spec, kernels::Backend& home,
                                std::vector<kernels::Backend*> placement, const float* images,
                                const int32_t* labels, int batch, uint64_t seed) {
  auto model = BuildModel(spec, home, std::move(placement));
  model->Reserve(batch);
  model->InitParams(seed);
  model->SetBatch(images, labels, batch);
  // Warm-up: the first passes build kernels and tune GEMMs on a GPU.
  for (int i = 0; i < 2; ++i) model->ComputeGradients(seed + i);
  return model;
}

double StepMs(Model& model, const float* images, const int32_t* labels, int batch, uint64_t seed,
              int repeats) {
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    const auto t = Clock::now();
    model.SetBatch(images, labels, batch);
    model.ComputeGradients(seed + r);
    model.backend().Synchronize();
    ms.push_back(1e3 * std::chrono::duration<double>(Clock::now() - t).count());
  }
  return Median(ms);
}

}  // namespace

PlacementChoice ChoosePlacement(const proto::ModelSpec& spec, kernels::Backend& home,
                                const std::vector<kernels::Backend*>& candidates,
                                const float* images, const int32_t* labels, int batch,
                                uint64_t seed, int repeats) {
  if (candidates.empty()) throw std::invalid_argument("placement: no candidate backends");
  if (std::find(candidates.begin(), candidates.end(), &home) == candidates.end())
    throw std::invalid_argument("placement: the home backend " + home.Name() +
                                " is not a candidate");
  repeats = std::max(repeats, 1);
  PlacementChoice choice;
  // [candidate][layer]: in the all-on-that-candidate model, wherever the layer ran.
  std::vector<std::vector<double>> layer_ms(candidates.size());
  std::vector<bool> in_place;
  for (size_t c = 0; c < candidates.size(); ++c) {
    const std::vector<kernels::Backend*> all(spec.layer_size(), candidates[c]);
    auto model = Prepared(spec, home, all, images, labels, batch, seed);
    if (c == 0)
      for (const auto& l : model->layers()) {
        choice.rows.push_back(PlacementRow{l->name(), {}, 0});
        in_place.push_back(l->InPlace());
      }
    std::vector<std::vector<double>> samples(model->layers().size());
    LayerTimes t;
    for (int r = 0; r < repeats; ++r) {
      model->ComputeGradients(seed + r, &t);
      for (size_t i = 0; i < samples.size(); ++i)
        samples[i].push_back(1e3 * (t.forward[i] + t.backward[i]));
    }
    const std::vector<kernels::Backend*>& ran = model->placement();
    for (size_t i = 0; i < samples.size(); ++i) {
      layer_ms[c].push_back(Median(samples[i]));
      choice.rows[i].ms.push_back(ran[i] == candidates[c] ? layer_ms[c][i] : kNotRun);
    }
    const std::string name = "all " + candidates[c]->Name() + (ran == all ? "" : " where it can");
    choice.candidates.push_back(
        PlacementCandidate{name, ran, StepMs(*model, images, labels, batch, seed, repeats)});
  }

  // Per layer: in-place layers follow their input, so a layer's cost is its
  // own plus that of the in-place layers after it, as the all-on-one model
  // ran them (on the home backend where that candidate lacks their ops).
  std::vector<kernels::Backend*> per_layer(choice.rows.size());
  for (size_t i = 0; i < choice.rows.size(); ++i) {
    if (in_place[i] && i > 0) continue;  // placed with the layer before it
    size_t end = i + 1;
    while (end < choice.rows.size() && in_place[end]) ++end;
    int best = -1;
    double best_ms = 0;
    for (size_t c = 0; c < candidates.size(); ++c) {
      if (choice.rows[i].ms[c] == kNotRun) continue;
      double ms = 0;
      for (size_t j = i; j < end; ++j) ms += layer_ms[c][j];
      if (best < 0 || ms < best_ms) best = static_cast<int>(c), best_ms = ms;
    }
    // The home candidate runs every layer, so there is always a best.
    for (size_t j = i; j < end; ++j) per_layer[j] = choice.candidates[best].placement[j];
  }
  const bool same_as_one =
      std::any_of(choice.candidates.begin(), choice.candidates.end(),
                  [&](const PlacementCandidate& c) { return c.placement == per_layer; });
  if (!same_as_one) {
    auto model = Prepared(spec, home, per_layer, images, labels, batch, seed);
    choice.candidates.push_back(PlacementCandidate{
        "per layer", model->placement(), StepMs(*model, images, labels, batch, seed, repeats)});
  }

  choice.chosen = 0;
  const double cpu_ms = choice.candidates[0].step_ms;
  for (size_t c = 1; c < choice.candidates.size(); ++c)
    if (choice.candidates[c].step_ms < (1.0 - kPlacementMargin) * cpu_ms &&
        choice.candidates[c].step_ms < choice.candidates[choice.chosen].step_ms)
      choice.chosen = static_cast<int>(c);
  choice.placement = choice.candidates[choice.chosen].placement;
  for (size_t i = 0; i < choice.rows.size(); ++i)
    choice.rows[i].chosen = static_cast<int>(
        std::find(candidates.begin(), candidates.end(), choice.placement[i]) - candidates.begin());
  return choice;
}

std::string PlacementChoice::Table(const std::vector<kernels::Backend*>& backends) const {
  std::string s;
  char line[256];
  std::snprintf(line, sizeof line, "%-12s", "layer");
  s += line;
  for (auto* b : backends) {
    std::snprintf(line, sizeof line, " %12s", (b->Name() + " ms").c_str());
    s += line;
  }
  s += "  runs on\n";
  for (const PlacementRow& r : rows) {
    std::snprintf(line, sizeof line, "%-12s", r.layer.c_str());
    s += line;
    for (double ms : r.ms) {
      if (ms == kNotRun)
        std::snprintf(line, sizeof line, " %12s", "n/a");
      else
        std::snprintf(line, sizeof line, " %12.3f", ms);
      s += line;
    }
    s += "  " + backends[r.chosen]->Name() + "\n";
  }
  for (size_t c = 0; c < candidates.size(); ++c) {
    std::snprintf(line, sizeof line, "step, %-12s %9.3f ms%s\n", candidates[c].name.c_str(),
                  candidates[c].step_ms, static_cast<int>(c) == chosen ? "  <- chosen" : "");
    s += line;
  }
  return s;
}

}  // namespace mt
