// How the activations a training step keeps for its backward pass are
// stored (--activation-precision): in floats, or in 16 bits (bf16, fp16) and
// widened back to floats when the backward pass reads them. Compute stays
// in floats either way (core/model/activation_plan.h says which values).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/half_storage.h"

namespace mt {

enum class ActivationPrecision { kFp32, kBf16, kFp16 };

// What mtworker, mtmodel profile and the hub's memory estimate assume
// unless told otherwise (docs/benchmarks.md has the measurements behind it).
inline constexpr ActivationPrecision kDefaultActivationPrecision = ActivationPrecision::kFp32;

// The words, for command lines (core/cli/choice_option.h).
const std::vector<std::pair<std::string, ActivationPrecision>>& ActivationPrecisionWords();

// "fp32", "bf16", "fp16".
const char* ActivationPrecisionName(ActivationPrecision p);
// The inverse; nullopt for any other text.
std::optional<ActivationPrecision> ParseActivationPrecision(const std::string& text);
// The 16-bit format, for kBf16 and kFp16.
kernels::HalfFormat HalfFormatOf(ActivationPrecision p);

}  // namespace mt
