// mtworker_faulty --corrupt-gradients (a test build; the production
// mtworker has no such flag): for testing the hub's defences. A worker that
// sends poisonous but well-formed contributions (gradients, or a round's
// weight changes) plays the hostile device of docs/security.md:
//
//   sign-flip          -g: the honest gradient pointing the wrong way
//   scale:X            X * g (e.g. scale:1e4)
//   flt-max            every value +-FLT_MAX, with the gradient's signs
//   bias:X             g + X * |g| * u: a fixed random direction u, drawn
//                      once, scaled each step to X times the gradient's own
//                      norm (segment by segment), so it stays inside any
//                      clip radius and looks like noise in one step
//   alternate-sign     -g on odd steps, g on even ones
//   against-average:X  g - X * |g| * a: pushes against a, the direction of
//                      the previous average the hub sent
//   nan-at:N           one NaN in every chunk of step N (1-based), honest
//                      otherwise
//
// What is corrupted is only what travels; the worker's own model follows
// the hub as any worker does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mt::faulty {

struct GradientCorruption {
  enum class Kind {
    kNone,
    kSignFlip,
    kScale,
    kFltMax,
    kBias,
    kAlternateSign,
    kAgainstAverage,
    kNanAt
  } kind = Kind::kNone;
  float factor = 1;  // kScale's, kBias's, kAgainstAverage's X
  int64_t step = 0;  // kNanAt's N
  bool active() const { return kind != Kind::kNone; }
};

// "" | "none" | "sign-flip" | "scale:X" | "flt-max" | "bias:X" |
// "alternate-sign" | "against-average:X" | "nan-at:N" (X finite, N >= 1);
// throws std::invalid_argument naming what it expected.
GradientCorruption ParseGradientCorruption(const std::string& text);

// One session's corruption, with what the stateful kinds remember: the
// bias's direction, the previous average.
class Corruptor {
 public:
  Corruptor(GradientCorruption c, size_t param_count);
  // A segment of the average the hub sent (against-average's target).
  void SawAverage(uint64_t offset, const float* values, size_t n);
  // Corrupts in place the segment at `offset` of the contribution for
  // `step` (0-based, as chunks carry it).
  void Apply(int64_t step, uint64_t offset, float* values, size_t n);

 private:
  GradientCorruption c_;
  std::vector<float> direction_;  // kBias's u; kAgainstAverage's last average
};

// out[i] = the corrupted in[i] for the stateless kinds (sign-flip, scale,
// flt-max; the others: a copy); out may be in.
void Corrupt(const GradientCorruption& c, const float* in, size_t n, float* out);

}  // namespace mt::faulty
