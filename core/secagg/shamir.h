#pragma once
// Shamir's secret sharing over the prime field GF(2^61 - 1): a secret of
// bytes is cut into 7-byte limbs, each the constant term of its own random
// polynomial of degree t - 1, and share x holds every polynomial's value at
// x (a holder's own number, never 0). Any t shares give the
// polynomials back by Lagrange interpolation at 0; t - 1 or fewer are
// consistent with every secret alike, so they tell nothing about it.
#include <cstdint>
#include <string>
#include <vector>

namespace mt::secagg {

constexpr uint64_t kShamirPrime = (uint64_t{1} << 61) - 1;

struct Share {
  uint32_t x = 0;               // 1..n
  std::vector<uint64_t> limbs;  // each below kShamirPrime
};

// One share of `secret` for each of the distinct, non-zero places `xs`, any
// `threshold` of which rebuild it (1 <= threshold <= xs.size()).
// Coefficients from OpenSSL's CSPRNG.
std::vector<Share> SplitSecret(const std::string& secret, int threshold,
                               const std::vector<uint32_t>& xs);

// The secret of `secret_bytes` bytes from at least `threshold` shares of
// distinct x (only the first `threshold` are used). Throws
// std::invalid_argument with fewer: a holder of fewer shares gets nothing.
std::string CombineShares(const std::vector<Share>& shares, int threshold, size_t secret_bytes);

// Lagrange interpolation at 0 of whatever shares are given, without the
// threshold check: what someone holding only these shares could compute
// (the tests show t - 1 shares give a wrong secret).
std::string InterpolateAtZero(const std::vector<Share>& shares, size_t secret_bytes);

// A share as bytes for a box (share_box.h), and back; Parse throws
// std::invalid_argument on bytes that are not a share.
std::string SerializeShare(const Share& share);
Share ParseShare(const std::string& bytes);

}  // namespace mt::secagg
