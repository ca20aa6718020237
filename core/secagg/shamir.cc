#include "core/secagg/shamir.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include <openssl/rand.h>

namespace mt::secagg {
namespace {

constexpr size_t kLimbBytes = 7;  // 56 bits, below the 61-bit prime
using u128 = unsigned __int128;

uint64_t Reduce(u128 v) {
  // 2^61 = 1 (mod p): fold the high bits onto the low ones.
  uint64_t r = static_cast<uint64_t>(v & kShamirPrime) + static_cast<uint64_t>(v >> 61);
  r = (r & kShamirPrime) + (r >> 61);
  return r >= kShamirPrime ? r - kShamirPrime : r;
}
uint64_t Add(uint64_t a, uint64_t b) { return Reduce(static_cast<u128>(a) + b); }
uint64_t Sub(uint64_t a, uint64_t b) { return Add(a, kShamirPrime - b); }
uint64_t Mul(uint64_t a, uint64_t b) { return Reduce(static_cast<u128>(a) * b); }
uint64_t Inverse(uint64_t a) {
  // Fermat: a^(p-2).
  uint64_t result = 1, base = a, e = kShamirPrime - 2;
  while (e > 0) {
    if (e & 1) result = Mul(result, base);
    base = Mul(base, base);
    e >>= 1;
  }
  return result;
}

uint64_t RandomElement() {
  for (;;) {
    uint64_t v = 0;
    if (RAND_bytes(reinterpret_cast<unsigned char*>(&v), sizeof v) != 1) {
      throw std::runtime_error("secagg: RAND_bytes failed (OpenSSL)");
    }
    v &= kShamirPrime;  // 61 bits; rejecting p itself keeps it uniform
    if (v < kShamirPrime) return v;
  }
}

std::vector<uint64_t> ToLimbs(const std::string& secret) {
  std::vector<uint64_t> limbs((secret.size() + kLimbBytes - 1) / kLimbBytes, 0);
  for (size_t i = 0; i < secret.size(); ++i) {
    limbs[i / kLimbBytes] |= static_cast<uint64_t>(static_cast<unsigned char>(secret[i]))
                             << (8 * (i % kLimbBytes));
  }
  return limbs;
}

}  // namespace

std::vector<Share> SplitSecret(const std::string& secret, int threshold,
                               const std::vector<uint32_t>& xs) {
  if (threshold < 1 || static_cast<size_t>(threshold) > xs.size()) {
    throw std::invalid_argument("secagg: threshold not in 1..holders");
  }
  if (std::set<uint32_t>(xs.begin(), xs.end()).size() != xs.size() ||
      std::count(xs.begin(), xs.end(), 0u) > 0) {
    throw std::invalid_argument("secagg: share places repeated or zero");
  }
  const std::vector<uint64_t> limbs = ToLimbs(secret);
  std::vector<Share> shares(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    shares[i].x = xs[i];
    shares[i].limbs.resize(limbs.size());
  }
  std::vector<uint64_t> coeffs(static_cast<size_t>(threshold));
  for (size_t l = 0; l < limbs.size(); ++l) {
    coeffs[0] = limbs[l];
    for (size_t c = 1; c < coeffs.size(); ++c) coeffs[c] = RandomElement();
    for (auto& share : shares) {
      uint64_t y = 0;  // Horner
      for (size_t c = coeffs.size(); c-- > 0;) y = Add(Mul(y, share.x), coeffs[c]);
      share.limbs[l] = y;
    }
  }
  return shares;
}

std::string InterpolateAtZero(const std::vector<Share>& shares, size_t secret_bytes) {
  const size_t limb_count = (secret_bytes + kLimbBytes - 1) / kLimbBytes;
  std::set<uint32_t> xs;
  for (const auto& s : shares) {
    if (s.x == 0 || !xs.insert(s.x).second) {  // a uint32_t place is below the prime
      throw std::invalid_argument("secagg: shares of repeated or zero place");
    }
    if (s.limbs.size() != limb_count) throw std::invalid_argument("secagg: share of another size");
  }
  std::vector<uint64_t> limbs(limb_count, 0);
  for (const auto& si : shares) {
    // Lagrange basis at 0: prod over j != i of x_j / (x_j - x_i).
    uint64_t num = 1, den = 1;
    for (const auto& sj : shares) {
      if (sj.x == si.x) continue;
      num = Mul(num, sj.x);
      den = Mul(den, Sub(sj.x, si.x));
    }
    const uint64_t basis = Mul(num, Inverse(den));
    for (size_t l = 0; l < limb_count; ++l) limbs[l] = Add(limbs[l], Mul(si.limbs[l], basis));
  }
  std::string secret(secret_bytes, '\0');
  for (size_t i = 0; i < secret_bytes; ++i) {
    secret[i] = static_cast<char>(limbs[i / kLimbBytes] >> (8 * (i % kLimbBytes)));
  }
  return secret;
}

std::string CombineShares(const std::vector<Share>& shares, int threshold, size_t secret_bytes) {
  if (threshold < 1 || shares.size() < static_cast<size_t>(threshold)) {
    throw std::invalid_argument("secagg: " + std::to_string(shares.size()) +
                                " shares, fewer than the threshold " + std::to_string(threshold));
  }
  return InterpolateAtZero(std::vector<Share>(shares.begin(), shares.begin() + threshold),
                           secret_bytes);
}

std::string SerializeShare(const Share& share) {
  std::string out;
  for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>(share.x >> (8 * b)));
  for (uint64_t limb : share.limbs) {
    for (int b = 0; b < 8; ++b) out.push_back(static_cast<char>(limb >> (8 * b)));
  }
  return out;
}

Share ParseShare(const std::string& bytes) {
  if (bytes.size() < 4 || (bytes.size() - 4) % 8 != 0 || bytes.size() > 4 + 8 * 64) {
    throw std::invalid_argument("secagg: not a share");
  }
  auto byte = [&](size_t i) { return static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])); };
  Share s;
  for (int b = 0; b < 4; ++b) s.x |= static_cast<uint32_t>(byte(static_cast<size_t>(b)) << (8 * b));
  for (size_t off = 4; off < bytes.size(); off += 8) {
    uint64_t limb = 0;
    for (size_t b = 0; b < 8; ++b) limb |= byte(off + b) << (8 * b);
    if (limb >= kShamirPrime) throw std::invalid_argument("secagg: share limb out of the field");
    s.limbs.push_back(limb);
  }
  if (s.x == 0) throw std::invalid_argument("secagg: share of place 0");
  return s;
}

}  // namespace mt::secagg
