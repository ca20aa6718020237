// The privacy a run spends: Renyi DP of the sampled Gaussian mechanism
// (Mironov, Talwar and Zhang, "Renyi Differential Privacy of the Sampled
// Gaussian Mechanism", 2019), composed over the rounds by adding RDP order
// by order, and converted to (epsilon, delta) over a grid of orders
// (Balle et al. 2020's conversion, the one Opacus and Google's
// dp_accounting use). Add-or-remove adjacency of one privacy unit; q is
// the probability that the unit takes part in a round (1: always).
#pragma once

#include <cstdint>
#include <vector>

namespace mt::dp {

// The orders RDP is evaluated at: 1.1 to 10.9 by tenths, then 11 to 63 and
// a few higher ones (Opacus's grid, extended for tiny epsilons).
const std::vector<double>& DefaultOrders();

// RDP at `order` (> 1) of one round of the Gaussian mechanism with noise
// multiplier sigma, its unit taking part with probability q in [0, 1].
double SampledGaussianRdp(double q, double sigma, double order);

struct Guarantee {
  double epsilon = 0;
  double order = 0;  // the order that gave it
};
// The smallest epsilon at `delta` the RDP curve rdp[i] at orders[i] gives.
Guarantee EpsilonFromRdp(const std::vector<double>& orders, const std::vector<double>& rdp,
                         double delta);

// Epsilon at `delta` after `rounds` rounds of the sampled Gaussian.
double Epsilon(double q, double sigma, int64_t rounds, double delta);

// The smallest noise multiplier, at most max_sigma, for which `rounds`
// rounds spend at most `epsilon` at `delta` (to 0.1% of sigma); 0 when
// even max_sigma spends more.
double NoiseForEpsilon(double q, int64_t rounds, double epsilon, double delta, double max_sigma);

// The noise multiplier above which a run learns nothing worth the name:
// the noise on the average is sigma * clip / workers per weight, and a
// worker's whole update is at most clip long.
constexpr double kMaxNoiseMultiplier = 100;

// A run's running total: each round released adds its RDP.
class Accountant {
 public:
  Accountant(double q, double sigma);
  void AddRounds(int64_t n) { rounds_ += n; }
  int64_t rounds() const { return rounds_; }
  double EpsilonAt(double delta) const;

 private:
  std::vector<double> per_round_;  // RDP of one round, at DefaultOrders()
  int64_t rounds_ = 0;
};

}  // namespace mt::dp
