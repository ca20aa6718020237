// Local SGD's arithmetic (mthub --sync-every H): a worker takes H optimizer
// steps on its own and sends the change of its weights; the hub averages
// the changes, and hub and workers add that average to the weights the
// round started from. Written once, for both sides: the next round's
// weights must be bit-identical on the hub and on every worker.
#pragma once

#include <cstddef>

namespace mt::local_sgd {

// change[i] = now[i] - start[i]: what a worker sends for its round.
void RoundChange(const float* now, const float* start, size_t n, float* change);

// weights[i] += change[i]: the round's averaged change applied to the
// weights it started from.
void AddChange(float* weights, const float* change, size_t n);

// out[i] = anchor[i] + (now[i] - sent[i]): with look-ahead, the steps a
// worker took since its change left (now - sent) moved onto the averaged
// weights (anchor).
void MoveOnto(const float* anchor, const float* now, const float* sent, size_t n, float* out);

// grad[i] += mu * (now[i] - start[i]): FedProx's proximal term, which holds
// a worker's local steps near the weights its round started from, so data
// unlike the others' pulls its weights less far apart (mthub --prox).
void AddProximal(float* grad, const float* now, const float* start, size_t n, float mu);

// Drift correction for rounds on data that differs per worker (mthub
// --drift-correction; SCAFFOLD's control variates, Karimireddy et al. 2020,
// option II, kept in weight space so it works the same under SGD, momentum
// and Adam). `drift` is this worker's correction per local step, c - c_i in
// SCAFFOLD's terms times the step size: each local step adds it to the
// weights after the optimizer's own step (AddChange), and at each round's
// end it becomes
//   drift += (average - own) / steps
// where `own` is the change this worker sent over the round (its `steps`
// local steps, corrections included) and `average` the round's averaged
// change every worker receives. So it needs no bytes beyond the round's
// own exchange: SCAFFOLD's server variate c follows from the average alone
// when every worker is in every round. Weighted as the hub averages, the
// workers' corrections sum to zero (nothing is added to the model as a
// whole); each pulls its worker's steps from where its own data leads
// towards where the group's went.
void UpdateDrift(float* drift, const float* average, const float* own, size_t n, int steps);

// The outer optimizer (DiLoCo) over n floats of the averaged change:
// v = m * v + change, then change = lr * v, the update every worker and the
// hub add. `velocity` may be null when m is 0. Returns false, changing
// nothing, when the update would not be finite (a finite average of huge
// changes can overflow v).
bool OuterStep(float* change, float* velocity, size_t n, float lr, float m);

}  // namespace mt::local_sgd
