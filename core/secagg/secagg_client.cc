#include "core/secagg/secagg_client.h"

#include <algorithm>
#include <iterator>
#include <set>
#include <stdexcept>
#include <string>

namespace mt::secagg {
namespace {

std::string AsString(const Key32& k) { return std::string(k.begin(), k.end()); }

// 8 bytes of a public key: enough to tell the keys of one run apart.
uint64_t KeyTag(const Key32& k) {
  uint64_t t = 0;
  for (int b = 0; b < 8; ++b) t |= static_cast<uint64_t>(k[b]) << (8 * b);
  return t;
}

[[noreturn]] void Refuse(const std::string& why) { throw std::invalid_argument("secagg: " + why); }

}  // namespace

SecAggClient::SecAggClient(int32_t id, uint64_t epoch, int threshold, FixedPoint fixed_point)
    : id_(id),
      epoch_(epoch),
      threshold_(threshold),
      fixed_point_(fixed_point),
      box_(KeyPair::Generate()) {
  if (id < 0) Refuse("a worker id below 0");
  if (threshold < 1) Refuse("a threshold below 1");
}

const Key32& SecAggClient::BoxKey(int32_t peer, const Key32& peer_box_public) {
  auto it = box_keys_.find(peer);
  if (it == box_keys_.end() || it->second.first != peer_box_public) {
    const Key32 key = DeriveKey(box_.Agree(peer_box_public), KeyUse::kShareBox, epoch_, id_, peer);
    it = box_keys_.insert_or_assign(peer, std::make_pair(peer_box_public, key)).first;
  }
  return it->second.second;
}

Bundle SecAggClient::PrepareBundle(const std::vector<Holder>& holders) {
  std::vector<uint32_t> xs;
  bool me = false;
  for (const Holder& h : holders) {
    if (h.id < 0) Refuse("a holder id below 0");
    xs.push_back(PlaceOf(h.id));
    if (h.id == id_) me = h.box_public == box_.public_key();
  }
  if (!me) Refuse("the holders lack this worker (or carry another box key for it)");
  if (holders.size() < static_cast<size_t>(threshold_)) {
    Refuse(std::to_string(holders.size()) + " holders, fewer than the threshold " +
           std::to_string(threshold_));
  }
  Secrets secrets;
  secrets.mask = KeyPair::Generate();
  secrets.self_seed = RandomKey();
  ++seq_;
  const std::vector<Share> seeds = SplitSecret(AsString(secrets.self_seed), threshold_, xs);
  const std::vector<Share> keys = SplitSecret(AsString(secrets.mask.private_key()), threshold_, xs);
  Bundle bundle;
  bundle.mask_public = secrets.mask.public_key();
  for (size_t i = 0; i < holders.size(); ++i) {
    const Holder& h = holders[i];
    secrets.holders.push_back(h.id);
    if (h.id == id_) {
      secrets.own_seed_share = seeds[i];
      continue;
    }
    const Key32& key = BoxKey(h.id, h.box_public);
    for (ShareKind kind : {ShareKind::kSelfSeed, ShareKind::kPrivateKey}) {
      const Share& share = kind == ShareKind::kSelfSeed ? seeds[i] : keys[i];
      const BoxLabel label{epoch_, seq_, kind, id_, h.id, secrets.mask.public_key()};
      bundle.boxes.push_back({id_, h.id, kind, seq_, Seal(key, label, SerializeShare(share))});
    }
  }
  ready_[seq_] = std::move(secrets);
  if (ready_.size() > kReadyBundles) ready_.erase(ready_.begin());
  return bundle;
}

void SecAggClient::BeginRound(uint64_t round, const std::vector<Member>& roster) {
  auto mine = ready_.end();
  for (const Member& m : roster) {
    if (m.id != id_) continue;
    for (auto it = ready_.begin(); it != ready_.end(); ++it)
      if (it->second.mask.public_key() == m.mask_public) mine = it;
  }
  if (mine == ready_.end()) {
    Refuse("the roster gives this worker no mask key of a ready bundle (each masks one round)");
  }
  const std::vector<int32_t>& holders = mine->second.holders;
  for (size_t i = 0; i < roster.size(); ++i) {
    const Member& m = roster[i];
    if (i > 0 && m.id <= roster[i - 1].id) Refuse("roster not in ascending ids");
    if (std::find(holders.begin(), holders.end(), m.id) == holders.end()) {
      Refuse("member " + std::to_string(m.id) + " holds no share of this worker's bundle");
    }
    if (m.id != id_ && peer_mask_keys_seen_.count(KeyTag(m.mask_public)) > 0) {
      Refuse("member " + std::to_string(m.id) + " comes with a mask key of an earlier round");
    }
  }
  if (roster.size() < static_cast<size_t>(threshold_)) Refuse("a roster below the threshold");
  round_secrets_ = std::move(mine->second);
  ready_.erase(ready_.begin(), std::next(mine));
  round_ = round;
  roster_ = roster;
  revealed_ = false;
  pair_mask_keys_.clear();
  for (const Member& m : roster) {
    if (m.id == id_) continue;
    peer_mask_keys_seen_.insert(KeyTag(m.mask_public));
    pair_mask_keys_[m.id] =
        DeriveKey(round_secrets_.mask.Agree(m.mask_public), KeyUse::kMask, epoch_, id_, m.id);
    BoxKey(m.id, m.box_public);
  }
}

void SecAggClient::Mask(uint64_t first, const float* values, size_t n, double weight,
                        uint32_t* out) {
  if (roster_.empty()) throw std::logic_error("secagg: Mask before BeginRound");
  fixed_point_.Encode(values, n, weight, out);
  stream_.Apply(round_secrets_.self_seed, round_, MaskKind::kSelf, first, out, n, false);
  for (const auto& [peer, key] : pair_mask_keys_) {
    // The lower id adds, the higher subtracts: the pair's masks cancel.
    stream_.Apply(key, round_, MaskKind::kPair, first, out, n, /*subtract=*/peer < id_);
  }
}

std::vector<RevealedShare> SecAggClient::Reveal(const std::vector<int32_t>& survivors,
                                                const std::vector<int32_t>& dropped,
                                                const std::vector<SealedShare>& boxes) {
  if (roster_.empty()) throw std::logic_error("secagg: Reveal before BeginRound");
  if (revealed_) Refuse("a second unmasking request in one round");
  const std::set<int32_t> alive(survivors.begin(), survivors.end());
  const std::set<int32_t> gone(dropped.begin(), dropped.end());
  if (alive.size() < static_cast<size_t>(threshold_)) {
    Refuse(std::to_string(alive.size()) + " survivors, fewer than the threshold " +
           std::to_string(threshold_) + ": nothing revealed");
  }
  if (alive.count(id_) == 0) Refuse("this worker is not a survivor");
  if (alive.size() != survivors.size() || gone.size() != dropped.size() ||
      alive.size() + gone.size() != roster_.size()) {
    Refuse("the request does not place every member once");
  }
  std::map<int32_t, const Member*> members;
  for (const Member& m : roster_) {
    if (alive.count(m.id) == gone.count(m.id)) {
      Refuse("member " + std::to_string(m.id) + " is not placed exactly once");
    }
    members[m.id] = &m;
  }
  std::set<int32_t> seen;
  std::vector<RevealedShare> out;
  out.push_back({id_, ShareKind::kSelfSeed, SerializeShare(round_secrets_.own_seed_share)});
  for (const SealedShare& b : boxes) {
    const auto member = members.find(b.from);
    const bool survivor = alive.count(b.from) > 0;
    if (b.to != id_ || b.from == id_ || member == members.end() ||
        b.kind != (survivor ? ShareKind::kSelfSeed : ShareKind::kPrivateKey) ||
        !seen.insert(b.from).second) {
      Refuse("a box of member " + std::to_string(b.from) + " that this request may not open");
    }
    const BoxLabel label{epoch_, b.seq, b.kind, b.from, id_, member->second->mask_public};
    out.push_back({b.from, b.kind, Open(BoxKey(b.from, member->second->box_public), label, b.box)});
  }
  revealed_ = true;
  return out;
}

}  // namespace mt::secagg
