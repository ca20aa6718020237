#include "core/model/activation_precision.h"

namespace mt {

const std::vector<std::pair<std::string, ActivationPrecision>>& ActivationPrecisionWords() {
  static const std::vector<std::pair<std::string, ActivationPrecision>> words{
      {"fp32", ActivationPrecision::kFp32},
      {"bf16", ActivationPrecision::kBf16},
      {"fp16", ActivationPrecision::kFp16}};
  return words;
}

const char* ActivationPrecisionName(ActivationPrecision p) {
  for (const auto& [word, value] : ActivationPrecisionWords())
    if (value == p) return word.c_str();
  return "?";
}

std::optional<ActivationPrecision> ParseActivationPrecision(const std::string& text) {
  for (const auto& [word, value] : ActivationPrecisionWords())
    if (word == text) return value;
  return std::nullopt;
}

kernels::HalfFormat HalfFormatOf(ActivationPrecision p) {
  return p == ActivationPrecision::kFp16 ? kernels::HalfFormat::kFp16 : kernels::HalfFormat::kBf16;
}

}  // namespace mt
