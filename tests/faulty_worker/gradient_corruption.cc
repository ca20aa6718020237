#include "tests/faulty_worker/gradient_corruption.h"

#include <cfloat>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

namespace mt::faulty {

namespace {

// X of "prefix:X" when text has that prefix and X is a whole finite number.
bool ParseFactor(const std::string& text, const std::string& prefix, float* x) {
  if (text.compare(0, prefix.size(), prefix) != 0) return false;
  size_t used = 0;
  try {
    *x = std::stof(text.substr(prefix.size()), &used);
  } catch (const std::exception&) {
    return false;
  }
  return used > 0 && used == text.size() - prefix.size() && std::isfinite(*x);
}

double Norm(const float* x, size_t n) {
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  return std::sqrt(sum);
}

// values += scale * |values| / |direction| * direction, over one segment.
void AddAlong(const float* direction, double scale, float* values, size_t n) {
  const double d = Norm(direction, n);
  if (d <= 0) return;
  const auto k = static_cast<float>(scale * Norm(values, n) / d);
  for (size_t i = 0; i < n; ++i) values[i] += k * direction[i];
}

}  // namespace

GradientCorruption ParseGradientCorruption(const std::string& text) {
  using Kind = GradientCorruption::Kind;
  GradientCorruption c;
  if (text.empty() || text == "none") return c;
  if (text == "sign-flip") c.kind = Kind::kSignFlip;
  if (text == "flt-max") c.kind = Kind::kFltMax;
  if (text == "alternate-sign") c.kind = Kind::kAlternateSign;
  if (ParseFactor(text, "scale:", &c.factor)) c.kind = Kind::kScale;
  if (ParseFactor(text, "bias:", &c.factor)) c.kind = Kind::kBias;
  if (ParseFactor(text, "against-average:", &c.factor)) c.kind = Kind::kAgainstAverage;
  float step = 0;
  if (ParseFactor(text, "nan-at:", &step) && step >= 1 && step == std::floor(step) && step < 1e9f) {
    c.kind = Kind::kNanAt;
    c.step = static_cast<int64_t>(step);
  }
  if (c.active()) return c;
  throw std::invalid_argument(
      "'" + text +
      "': expected none, sign-flip, scale:X, flt-max, bias:X, alternate-sign, "
      "against-average:X or nan-at:N");
}

Corruptor::Corruptor(GradientCorruption c, size_t param_count) : c_(c) {
  using Kind = GradientCorruption::Kind;
  if (c_.kind == Kind::kAgainstAverage) direction_.assign(param_count, 0.0f);
  if (c_.kind == Kind::kBias) {
    // Drawn once per session; a fixed seed, so a bench run is repeatable.
    std::mt19937 rng(12345);
    std::normal_distribution<float> normal;
    direction_.resize(param_count);
    for (float& v : direction_) v = normal(rng);
  }
}

void Corruptor::SawAverage(uint64_t offset, const float* values, size_t n) {
  if (c_.kind != GradientCorruption::Kind::kAgainstAverage || offset + n > direction_.size())
    return;
  for (size_t i = 0; i < n; ++i) direction_[offset + i] = values[i];
}

void Corruptor::Apply(int64_t step, uint64_t offset, float* values, size_t n) {
  using Kind = GradientCorruption::Kind;
  switch (c_.kind) {
    case Kind::kBias:
    case Kind::kAgainstAverage:
      if (offset + n > direction_.size()) throw std::logic_error("a segment beyond the model");
      AddAlong(direction_.data() + offset, c_.kind == Kind::kBias ? c_.factor : -c_.factor, values,
               n);
      return;
    case Kind::kAlternateSign:
      if (step % 2 == 1)
        for (size_t i = 0; i < n; ++i) values[i] = -values[i];
      return;
    case Kind::kNanAt:
      if (step + 1 == c_.step && n > 0) values[0] = std::numeric_limits<float>::quiet_NaN();
      return;
    default: Corrupt(c_, values, n, values);
  }
}

void Corrupt(const GradientCorruption& c, const float* in, size_t n, float* out) {
  switch (c.kind) {
    case GradientCorruption::Kind::kSignFlip:
      for (size_t i = 0; i < n; ++i) out[i] = -in[i];
      return;
    case GradientCorruption::Kind::kScale:
      for (size_t i = 0; i < n; ++i) out[i] = c.factor * in[i];
      return;
    case GradientCorruption::Kind::kFltMax:
      for (size_t i = 0; i < n; ++i) out[i] = std::signbit(in[i]) ? -FLT_MAX : FLT_MAX;
      return;
    default:
      for (size_t i = 0; i < n; ++i) out[i] = in[i];
      return;
  }
}

}  // namespace mt::faulty
