#include "core/privacy/dp_accountant.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace mt::dp {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// log(exp(a) + exp(b)) and log(exp(a) - exp(b)) (a >= b) without overflow.
double LogAdd(double a, double b) {
  if (a == -kInf) return b;
  if (b == -kInf) return a;
  const double hi = std::max(a, b), lo = std::min(a, b);
  return hi + std::log1p(std::exp(lo - hi));
}
double LogSub(double a, double b) {
  if (b == -kInf) return a;
  if (b >= a) return -kInf;  // rounding: the difference is lost
  return a + std::log1p(-std::exp(b - a));
}

// log(erfc(x)), kept finite where erfc underflows (x beyond ~26) by its
// asymptotic series.
double LogErfc(double x) {
  if (x < 20) return std::log(std::erfc(x));
  const double x2 = x * x;
  return -x2 - std::log(x) - 0.5 * std::log(M_PI) +
         std::log1p(-1 / (2 * x2) + 3 / (4 * x2 * x2) - 15 / (8 * x2 * x2 * x2));
}

double LogBinomial(int n, int k) {
  return std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0);
}

// log A_alpha for an integer order: the binomial expansion of
// E[((1 - q) + q * exp((2z - 1) / (2 sigma^2)))^alpha] under N(0, sigma^2).
double LogAInteger(double q, double sigma, int alpha) {
  double log_a = -kInf;
  for (int i = 0; i <= alpha; ++i) {
    const double term = LogBinomial(alpha, i) + i * std::log(q) + (alpha - i) * std::log1p(-q) +
                        (i * i - i) / (2 * sigma * sigma);
    log_a = LogAdd(log_a, term);
  }
  return log_a;
}

// log A_alpha for a fractional order: the same expectation split at z0,
// where the two densities cross, each half a series in the generalised
// binomial coefficients (signed) with Gaussian tail factors (the paper's
// section 3.3). Summed until the terms no longer matter.
double LogAFractional(double q, double sigma, double alpha) {
  double log_a0 = -kInf, log_a1 = -kInf;
  const double z0 = sigma * sigma * std::log(1 / q - 1) + 0.5;
  double coef = 1;  // binom(alpha, i), built term by term
  for (int i = 0;; ++i) {
    if (i > 0) coef *= (alpha - (i - 1)) / i;
    if (coef == 0) break;
    const double log_coef = std::log(std::fabs(coef));
    const double j = alpha - i;
    const double log_t0 = log_coef + i * std::log(q) + j * std::log1p(-q);
    const double log_t1 = log_coef + j * std::log(q) + i * std::log1p(-q);
    const double log_e0 = std::log(0.5) + LogErfc((i - z0) / (std::sqrt(2.0) * sigma));
    const double log_e1 = std::log(0.5) + LogErfc((z0 - j) / (std::sqrt(2.0) * sigma));
    const double log_s0 = log_t0 + (i * i - i) / (2 * sigma * sigma) + log_e0;
    const double log_s1 = log_t1 + (j * j - j) / (2 * sigma * sigma) + log_e1;
    if (coef > 0) {
      log_a0 = LogAdd(log_a0, log_s0);
      log_a1 = LogAdd(log_a1, log_s1);
    } else {
      log_a0 = LogSub(log_a0, log_s0);
      log_a1 = LogSub(log_a1, log_s1);
    }
    if (std::max(log_s0, log_s1) < -30 || i > 10000) break;
  }
  return LogAdd(log_a0, log_a1);
}

}  // namespace

const std::vector<double>& DefaultOrders() {
  static const std::vector<double> orders = [] {
    std::vector<double> o;
    for (int x = 1; x < 100; ++x) o.push_back(1 + x / 10.0);
    for (int a = 11; a < 64; ++a) o.push_back(a);
    for (double a : {80.0, 128.0, 256.0, 512.0, 1024.0}) o.push_back(a);
    return o;
  }();
  return orders;
}

double SampledGaussianRdp(double q, double sigma, double order) {
  if (!(q >= 0 && q <= 1)) throw std::invalid_argument("sampling probability outside [0, 1]");
  if (!(order > 1)) throw std::invalid_argument("RDP order must exceed 1");
  if (q == 0) return 0;
  if (!(sigma > 0)) return kInf;
  if (q == 1) return order / (2 * sigma * sigma);
  if (std::isinf(order)) return kInf;
  const double log_a = order == std::floor(order) && order < 1e6
                           ? LogAInteger(q, sigma, static_cast<int>(order))
                           : LogAFractional(q, sigma, order);
  return log_a / (order - 1);
}

Guarantee EpsilonFromRdp(const std::vector<double>& orders, const std::vector<double>& rdp,
                         double delta) {
  if (orders.size() != rdp.size()) throw std::invalid_argument("one RDP value per order");
  if (!(delta > 0 && delta < 1)) throw std::invalid_argument("delta must lie in (0, 1)");
  Guarantee best{kInf, 0};
  for (size_t i = 0; i < orders.size(); ++i) {
    const double a = orders[i];
    if (!(a > 1) || std::isinf(rdp[i])) continue;
    // Balle et al. 2020, Theorem 21 (Canonne, Kamath and Steinke's form).
    const double eps = rdp[i] - (std::log(delta) + std::log(a)) / (a - 1) + std::log((a - 1) / a);
    if (eps < best.epsilon) best = {std::max(0.0, eps), a};
  }
  return best;
}

double Epsilon(double q, double sigma, int64_t rounds, double delta) {
  Accountant accountant(q, sigma);
  accountant.AddRounds(rounds);
  return accountant.EpsilonAt(delta);
}

double NoiseForEpsilon(double q, int64_t rounds, double epsilon, double delta, double max_sigma) {
  if (Epsilon(q, max_sigma, rounds, delta) > epsilon) return 0;
  // Epsilon falls as sigma grows: bisect on a log scale.
  double lo = 1e-3, hi = max_sigma;
  if (Epsilon(q, lo, rounds, delta) <= epsilon) return lo;
  while (hi / lo > 1.001) {
    const double mid = std::sqrt(lo * hi);
    (Epsilon(q, mid, rounds, delta) > epsilon ? lo : hi) = mid;
  }
  return hi;
}

Accountant::Accountant(double q, double sigma) {
  for (double order : DefaultOrders()) per_round_.push_back(SampledGaussianRdp(q, sigma, order));
}

double Accountant::EpsilonAt(double delta) const {
  if (rounds_ == 0) return 0;
  std::vector<double> total(per_round_);
  for (double& r : total) r *= static_cast<double>(rounds_);
  return EpsilonFromRdp(DefaultOrders(), total, delta).epsilon;
}

}  // namespace mt::dp
