#include "tests/faulty_worker/gradient_corruption.h"

#include <cfloat>
#include <cmath>
#include <stdexcept>

namespace mt::faulty {

GradientCorruption ParseGradientCorruption(const std::string& text) {
  GradientCorruption c;
  if (text.empty() || text == "none") return c;
  if (text == "sign-flip") {
    c.kind = GradientCorruption::Kind::kSignFlip;
    return c;
  }
  if (text == "flt-max") {
    c.kind = GradientCorruption::Kind::kFltMax;
    return c;
  }
  const std::string prefix = "scale:";
  if (text.compare(0, prefix.size(), prefix) == 0) {
    size_t used = 0;
    float x = 0;
    try {
      x = std::stof(text.substr(prefix.size()), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used > 0 && used == text.size() - prefix.size() && std::isfinite(x)) {
      c.kind = GradientCorruption::Kind::kScale;
      c.factor = x;
      return c;
    }
  }
  throw std::invalid_argument("'" + text + "': expected none, sign-flip, scale:X or flt-max");
}

void Corrupt(const GradientCorruption& c, const float* in, size_t n, float* out) {
  switch (c.kind) {
    case GradientCorruption::Kind::kNone:
      for (size_t i = 0; i < n; ++i) out[i] = in[i];
      return;
    case GradientCorruption::Kind::kSignFlip:
      for (size_t i = 0; i < n; ++i) out[i] = -in[i];
      return;
    case GradientCorruption::Kind::kScale:
      for (size_t i = 0; i < n; ++i) out[i] = c.factor * in[i];
      return;
    case GradientCorruption::Kind::kFltMax:
      for (size_t i = 0; i < n; ++i) out[i] = std::signbit(in[i]) ? -FLT_MAX : FLT_MAX;
      return;
  }
}

}  // namespace mt::faulty
