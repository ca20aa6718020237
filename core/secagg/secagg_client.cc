#include "core/secagg/secagg_client.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace mt::secagg {
namespace {

std::string AsString(const Key32& k) { return std::string(k.begin(), k.end()); }

void CheckRoster(const std::vector<Member>& roster, int32_t me, int threshold) {
  bool found = false;
  for (size_t i = 0; i < roster.size(); ++i) {
    if (i > 0 && roster[i].id <= roster[i - 1].id) {
      throw std::invalid_argument("secagg: roster not in ascending ids");
    }
    found = found || roster[i].id == me;
  }
  if (!found) throw std::invalid_argument("secagg: roster without this worker");
  if (threshold < 1 || static_cast<size_t>(threshold) > roster.size()) {
    throw std::invalid_argument("secagg: threshold " + std::to_string(threshold) + " for " +
                                std::to_string(roster.size()) + " members");
  }
}

}  // namespace

SecAggClient::SecAggClient(int32_t id, uint64_t epoch, FixedPoint fixed_point)
    : id_(id), epoch_(epoch), fixed_point_(fixed_point), box_(KeyPair::Generate()) {}

Key32 SecAggClient::Advertise(uint64_t round) {
  round_ = round;
  mask_ = KeyPair::Generate();
  self_seed_ = RandomKey();
  roster_.clear();
  pair_mask_keys_.clear();
  revealed_ = false;
  return mask_.public_key();
}

std::vector<SealedShare> SecAggClient::ShareSecrets(const std::vector<Member>& roster,
                                                    int threshold) {
  CheckRoster(roster, id_, threshold);
  roster_ = roster;
  threshold_ = threshold;
  const int n = static_cast<int>(roster.size());
  const std::vector<Share> seed_shares = SplitSecret(AsString(self_seed_), threshold, n);
  const std::vector<Share> key_shares = SplitSecret(AsString(mask_.private_key()), threshold, n);
  std::vector<SealedShare> out;
  for (size_t i = 0; i < roster.size(); ++i) {
    const Member& m = roster[i];
    if (m.id == id_) {
      if (m.mask_public != mask_.public_key() || m.box_public != box_.public_key()) {
        throw std::invalid_argument("secagg: the roster carries other keys for this worker");
      }
      own_seed_share_ = seed_shares[i];
      own_key_share_ = key_shares[i];
      continue;
    }
    pair_mask_keys_[m.id] = DeriveKey(mask_.Agree(m.mask_public), KeyUse::kMask, epoch_, id_, m.id);
    auto box_key = box_keys_.find(m.id);
    if (box_key == box_keys_.end()) {
      box_key = box_keys_
                    .emplace(m.id, DeriveKey(box_.Agree(m.box_public), KeyUse::kShareBox, epoch_,
                                             id_, m.id))
                    .first;
    }
    for (ShareKind kind : {ShareKind::kSelfSeed, ShareKind::kPrivateKey}) {
      const Share& share = kind == ShareKind::kSelfSeed ? seed_shares[i] : key_shares[i];
      const BoxLabel label{epoch_, round_, kind, id_, m.id};
      out.push_back({id_, m.id, kind, Seal(box_key->second, label, SerializeShare(share))});
    }
  }
  return out;
}

void SecAggClient::Mask(uint64_t first, const float* values, size_t n, double weight,
                        uint32_t* out) {
  if (roster_.empty()) throw std::logic_error("secagg: Mask before ShareSecrets");
  fixed_point_.Encode(values, n, weight, out);
  stream_.Apply(self_seed_, round_, MaskKind::kSelf, first, out, n, false);
  for (const auto& [peer, key] : pair_mask_keys_) {
    // The lower id adds, the higher subtracts: the pair's masks cancel.
    stream_.Apply(key, round_, MaskKind::kPair, first, out, n, /*subtract=*/peer < id_);
  }
}

std::vector<RevealedShare> SecAggClient::Reveal(const std::vector<int32_t>& survivors,
                                                const std::vector<int32_t>& dropped,
                                                const std::vector<SealedShare>& boxes) {
  if (roster_.empty()) throw std::logic_error("secagg: Reveal before ShareSecrets");
  if (revealed_) throw std::invalid_argument("secagg: a second unmasking request in one round");
  const std::set<int32_t> alive(survivors.begin(), survivors.end());
  const std::set<int32_t> gone(dropped.begin(), dropped.end());
  if (alive.size() < static_cast<size_t>(threshold_)) {
    throw std::invalid_argument("secagg: " + std::to_string(alive.size()) +
                                " survivors, fewer than the threshold " +
                                std::to_string(threshold_) + ": nothing revealed");
  }
  if (alive.count(id_) == 0) throw std::invalid_argument("secagg: this worker is not a survivor");
  if (alive.size() + gone.size() != roster_.size()) {
    throw std::invalid_argument("secagg: the request does not place every member once");
  }
  for (const Member& m : roster_) {
    if (alive.count(m.id) == gone.count(m.id)) {
      throw std::invalid_argument("secagg: member " + std::to_string(m.id) +
                                  " is not placed exactly once");
    }
  }
  std::set<int32_t> seen;
  std::vector<RevealedShare> out;
  out.push_back({id_, ShareKind::kSelfSeed, SerializeShare(own_seed_share_)});
  for (const SealedShare& b : boxes) {
    const bool survivor = alive.count(b.from) > 0;
    const ShareKind expected = survivor ? ShareKind::kSelfSeed : ShareKind::kPrivateKey;
    if (b.to != id_ || b.from == id_ || box_keys_.count(b.from) == 0 || b.kind != expected ||
        !seen.insert(b.from).second) {
      throw std::invalid_argument("secagg: a box of member " + std::to_string(b.from) +
                                  " that this request may not open");
    }
    const BoxLabel label{epoch_, round_, b.kind, b.from, id_};
    out.push_back({b.from, b.kind, Open(box_keys_.at(b.from), label, b.box)});
  }
  revealed_ = true;
  return out;
}

}  // namespace mt::secagg
