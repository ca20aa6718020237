#include "core/secagg/secagg_server.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/secagg/shamir.h"

namespace mt::secagg {
namespace {

constexpr size_t kSecretBytes = 32;

std::string Who(int32_t id) { return "member " + std::to_string(id); }

Key32 ToKey(const std::string& s) {
  Key32 k{};
  std::copy(s.begin(), s.end(), k.begin());
  return k;
}

// The first `threshold` shares of one secret, or a refusal naming it.
std::string Rebuild(const std::map<uint32_t, std::string>& by_place, int threshold,
                    const std::string& what) {
  std::vector<Share> shares;
  for (const auto& [x, bytes] : by_place) shares.push_back(ParseShare(bytes));
  if (shares.size() < static_cast<size_t>(threshold)) {
    throw std::invalid_argument("secagg: " + std::to_string(shares.size()) + " shares of " + what +
                                ", fewer than the threshold " + std::to_string(threshold) +
                                ": it cannot be rebuilt");
  }
  return CombineShares(shares, threshold, kSecretBytes);
}

}  // namespace

SecAggServer::SecAggServer(uint64_t epoch, size_t param_count, int threshold,
                           FixedPoint fixed_point)
    : epoch_(epoch), fixed_point_(fixed_point), threshold_(threshold), sum_(param_count, 0) {
  if (threshold < 1) throw std::invalid_argument("secagg: a threshold below 1");
}

size_t SecAggServer::IndexOf(int32_t id) const {
  for (size_t i = 0; i < roster_.size(); ++i) {
    if (roster_[i].id == id) return i;
  }
  throw std::invalid_argument("secagg: " + Who(id) + " is not in the round");
}

void SecAggServer::BeginRound(uint64_t round, std::vector<Member> roster) {
  for (size_t i = 1; i < roster.size(); ++i) {
    if (roster[i].id <= roster[i - 1].id)
      throw std::invalid_argument("secagg: roster not ascending");
  }
  if (static_cast<size_t>(threshold_) > roster.size()) {
    throw std::invalid_argument("secagg: a roster smaller than the threshold");
  }
  round_ = round;
  roster_ = std::move(roster);
  closed_ = false;
  finished_ = false;
  std::fill(sum_.begin(), sum_.end(), 0u);
  received_.clear();
  weights_.clear();
  boxes_.clear();
  answered_.clear();
  seed_shares_.clear();
  key_shares_.clear();
}

void SecAggServer::AddBoxes(int32_t from, const std::vector<SealedShare>& boxes) {
  IndexOf(from);
  if (closed_) throw std::invalid_argument("secagg: boxes after the round closed");
  for (const SealedShare& b : boxes) {
    if (b.from != from) throw std::invalid_argument("secagg: " + Who(from) + " sent another's box");
    if (std::any_of(roster_.begin(), roster_.end(), [&](const Member& m) { return m.id == b.to; }))
      boxes_.push_back(b);
  }
}

void SecAggServer::AddMasked(int32_t from, uint64_t first, const uint32_t* y, size_t n) {
  IndexOf(from);
  if (closed_ || weights_.count(from) > 0) {
    throw std::invalid_argument("secagg: an update from " + Who(from) + " out of turn");
  }
  if (first > sum_.size() || n > sum_.size() - first) {
    throw std::invalid_argument("secagg: masked values beyond the parameters");
  }
  std::vector<uint32_t>& buffer = pending_[from];
  buffer.resize(sum_.size());  // once per member: kept across rounds
  std::copy(y, y + n, buffer.begin() + static_cast<std::ptrdiff_t>(first));
  received_[from] += n;
}

void SecAggServer::Submitted(int32_t from, double weight) {
  IndexOf(from);
  if (closed_ || weights_.count(from) > 0 || received_[from] != sum_.size()) {
    throw std::invalid_argument("secagg: " + Who(from) + " submitted an incomplete update");
  }
  if (!(weight > 0.0 && weight <= 1.0)) throw std::invalid_argument("secagg: weight not in (0, 1]");
  AddInRing(sum_.data(), pending_[from].data(), sum_.size());
  weights_[from] = weight;
}

UnmaskRequest SecAggServer::CloseRound() {
  if (weights_.size() < static_cast<size_t>(threshold_)) {
    throw std::runtime_error("secagg: " + std::to_string(weights_.size()) +
                             " members sent their update, fewer than the threshold " +
                             std::to_string(threshold_) + ": the round cannot be unmasked");
  }
  closed_ = true;
  UnmaskRequest request;
  for (const Member& m : roster_) {
    (weights_.count(m.id) > 0 ? request.survivors : request.dropped).push_back(m.id);
  }
  for (int32_t s : request.survivors) request.boxes_for[s];
  for (const SealedShare& b : boxes_) {
    const bool from_survivor = weights_.count(b.from) > 0;
    const ShareKind wanted = from_survivor ? ShareKind::kSelfSeed : ShareKind::kPrivateKey;
    if (weights_.count(b.to) > 0 && b.kind == wanted) request.boxes_for[b.to].push_back(b);
  }
  return request;
}

void SecAggServer::AddRevealed(int32_t from, const std::vector<RevealedShare>& shares) {
  IndexOf(from);
  const uint32_t place = secagg::PlaceOf(from);
  if (!closed_ || weights_.count(from) == 0 || !answered_.insert(from).second) {
    throw std::invalid_argument("secagg: shares from " + Who(from) + " out of turn");
  }
  for (const RevealedShare& r : shares) {
    const bool survivor = weights_.count(r.owner) > 0;
    IndexOf(r.owner);
    if (r.kind != (survivor ? ShareKind::kSelfSeed : ShareKind::kPrivateKey) ||
        ParseShare(r.share).x != place) {
      throw std::invalid_argument("secagg: " + Who(from) + " revealed a share it does not hold");
    }
    (survivor ? seed_shares_ : key_shares_)[r.owner][place] = r.share;
  }
}

bool SecAggServer::CanFinish() const {
  if (!closed_) return false;
  const auto t = static_cast<size_t>(threshold_);
  for (const Member& m : roster_) {
    const auto& shares = weights_.count(m.id) > 0 ? seed_shares_ : key_shares_;
    const auto it = shares.find(m.id);
    if (it == shares.end() || it->second.size() < t) return false;
  }
  return true;
}

void SecAggServer::Finish(float* out) {
  if (!closed_ || finished_) throw std::logic_error("secagg: Finish outside a closed round");
  finished_ = true;
  const size_t n = sum_.size();
  double total_weight = 0.0;
  for (const Member& m : roster_) {
    const auto w = weights_.find(m.id);
    if (w != weights_.end()) {
      total_weight += w->second;
      const Key32 seed = ToKey(Rebuild(seed_shares_[m.id], threshold_, Who(m.id) + "'s self seed"));
      stream_.Apply(seed, round_, MaskKind::kSelf, 0, sum_.data(), n, /*subtract=*/true);
      continue;
    }
    const KeyPair key = KeyPair::FromPrivate(
        ToKey(Rebuild(key_shares_[m.id], threshold_, Who(m.id) + "'s mask key")));
    if (key.public_key() != m.mask_public) {
      throw std::runtime_error("secagg: the shares of " + Who(m.id) +
                               "'s mask key rebuild another key");
    }
    for (const auto& [survivor, weight] : weights_) {
      const Key32 pair = DeriveKey(key.Agree(roster_[IndexOf(survivor)].mask_public), KeyUse::kMask,
                                   epoch_, m.id, survivor);
      // The survivor subtracted this pair's mask if the dropped id is lower.
      stream_.Apply(pair, round_, MaskKind::kPair, 0, sum_.data(), n, /*subtract=*/m.id > survivor);
    }
  }
  fixed_point_.Decode(sum_.data(), n, total_weight, out);
}

}  // namespace mt::secagg
