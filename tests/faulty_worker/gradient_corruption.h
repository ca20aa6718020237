// mtworker_faulty --corrupt-gradients (a test build; the production
// mtworker has no such flag): for testing the hub's defences. A worker that
// sends poisonous but well-formed contributions (gradients, or a round's
// weight changes) plays the hostile device of docs/security.md:
//
//   sign-flip   -g: the honest gradient pointing the wrong way
//   scale:X     X * g (e.g. scale:1e4)
//   flt-max     every value +-FLT_MAX, with the gradient's signs
//
// What is corrupted is only what travels; the worker's own model follows
// the hub as any worker does.
#pragma once

#include <cstddef>
#include <string>

namespace mt::faulty {

struct GradientCorruption {
  enum class Kind { kNone, kSignFlip, kScale, kFltMax } kind = Kind::kNone;
  float factor = 1;  // kScale's
  bool active() const { return kind != Kind::kNone; }
};

// "" | "none" | "sign-flip" | "scale:X" (X finite) | "flt-max"; throws
// std::invalid_argument naming what it expected.
GradientCorruption ParseGradientCorruption(const std::string& text);

// out[i] = the corrupted in[i]; out may be in.
void Corrupt(const GradientCorruption& c, const float* in, size_t n, float* out);

}  // namespace mt::faulty
