// What mtmodel profile shows of the activation plan, from the plan alone
// (no training): per layer, what is kept of its output for the backward
// pass and what that costs per sample; and the memory per sample of each
// activation precision and recomputation setting, so a user can choose a
// batch for a phone's memory.
#pragma once

#include <nlohmann/json.hpp>

#include "core/model/activation_precision.h"
#include "model.pb.h"

namespace mt {

// Rows of {layer, output_kib, kept, kept_kib} per sample for this setting.
nlohmann::json KeptPerLayer(const proto::ModelSpec& spec, bool recompute,
                            ActivationPrecision precision);
// {precision: {"kept": KiB, "recompute": KiB}} per sample: what the batch
// caps divide by (core/profile/memory_breakdown.h's PredictBytesPerSample).
nlohmann::json PerSampleBySetting(const proto::ModelSpec& spec);

void PrintKeptPerLayer(const nlohmann::json& rows);
void PrintPerSampleBySetting(const nlohmann::json& table, bool recompute,
                             ActivationPrecision precision);

}  // namespace mt
