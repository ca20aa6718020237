// Clipping an update to an L2 norm: the bound that makes one worker's
// influence on the sum (its sensitivity) at most the clip.
#pragma once

#include <cstddef>

namespace mt::dp {

// Scales v[0, n) down so its L2 norm is at most `clip` (clip > 0); a
// vector already within it is left as it is. Returns its norm before.
// A vector whose norm is not finite is zeroed: it cannot be scaled into
// the ball, and what it carries must not leave unbounded.
double ClipToNorm(float* v, size_t n, double clip);

double L2Norm(const float* v, size_t n);

}  // namespace mt::dp
