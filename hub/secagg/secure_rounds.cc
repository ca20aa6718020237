#include "hub/secagg/secure_rounds.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <stdexcept>

#include "core/secagg/round_types.h"

namespace mt {
namespace {

using secagg::Key32;

bool ToKey(const std::string& bytes, Key32* key) {
  if (bytes.size() != key->size()) return false;
  std::memcpy(key->data(), bytes.data(), key->size());
  return true;
}

std::string FromKey(const Key32& key) { return std::string(key.begin(), key.end()); }

secagg::ShareKind KindOf(proto::SecAggShareKind k) {
  if (k == proto::SECAGG_SHARE_MASK_KEY) return secagg::ShareKind::kPrivateKey;
  if (k == proto::SECAGG_SHARE_SELF_SEED) return secagg::ShareKind::kSelfSeed;
  throw std::invalid_argument("a share of no known kind");
}

proto::SecAggShareKind ProtoKind(secagg::ShareKind k) {
  return k == secagg::ShareKind::kPrivateKey ? proto::SECAGG_SHARE_MASK_KEY
                                             : proto::SECAGG_SHARE_SELF_SEED;
}

}  // namespace

SecureRounds::SecureRounds(int workers, size_t begin, size_t end) : begin_(begin) {
  const Key32 random = secagg::RandomKey();
  uint64_t epoch = 0;
  std::memcpy(&epoch, random.data(), sizeof epoch);
  settings_.set_epoch(epoch);
  settings_.set_threshold(secagg::DefaultThreshold(workers));
  settings_.set_clip(secagg::FixedPoint().clip);
  server_ = std::make_unique<secagg::SecAggServer>(epoch, end - begin, settings_.threshold());
  bits_.resize(end - begin);
  average_.assign(end, 0.0f);
}

std::string SecureRounds::OnHello(int id, const std::string& box_key) {
  Key32 key{};
  if (!ToKey(box_key, &key))
    return "this hub runs --secure-aggregation: the Hello must carry a 32-byte box key";
  box_keys_[id] = key;
  bundles_.erase(id);  // a bundle of an earlier session was sealed for another box key
  return "";
}

void SecureRounds::Forget(int id) {
  box_keys_.erase(id);
  bundles_.erase(id);
}

proto::HubMessage SecureRounds::Holders() const {
  proto::HubMessage m;
  for (const auto& [id, key] : box_keys_) {
    proto::SecAggMember* h = m.mutable_secagg_holders()->add_holders();
    h->set_worker_id(id);
    h->set_box_key(FromKey(key));
  }
  return m;
}

std::string SecureRounds::OnBundle(int id, const proto::SecAggBundle& bundle) {
  Pending p;
  if (!ToKey(bundle.mask_key(), &p.mask_key)) return "a bundle without a 32-byte mask key";
  std::set<int> holders = {id};
  for (const proto::SealedShare& b : bundle.boxes()) {
    secagg::SealedShare s;
    s.from = b.from();
    s.to = b.to();
    s.seq = b.seq();
    s.box = b.box();
    try {
      s.kind = KindOf(b.kind());
    } catch (const std::invalid_argument& e) {
      return std::string("a bundle with ") + e.what();
    }
    if (s.from != id || s.to == id || s.box.size() > 4096)
      return "a bundle with a box of another sender, for itself, or too large";
    holders.insert(s.to);
    p.boxes.push_back(std::move(s));
  }
  p.holders.assign(holders.begin(), holders.end());
  bundles_[id] = std::move(p);
  return "";
}

std::vector<int> SecureRounds::Coverable(std::vector<int> ids) const {
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = ids.begin(); it != ids.end(); ++it) {
      const auto b = bundles_.find(*it);
      const bool covered =
          b != bundles_.end() && box_keys_.count(*it) > 0 &&
          std::all_of(ids.begin(), ids.end(), [&](int other) {
            return std::binary_search(b->second.holders.begin(), b->second.holders.end(), other);
          });
      if (!covered) {
        ids.erase(it);
        changed = true;
        break;
      }
    }
  }
  return ids;
}

std::vector<proto::SecAggMember> SecureRounds::BeginRound(int64_t step,
                                                          const std::vector<int>& ids) {
  std::vector<secagg::Member> roster;
  std::vector<proto::SecAggMember> members;
  for (int id : ids) {
    const Pending& p = bundles_.at(id);
    roster.push_back({id, box_keys_.at(id), p.mask_key});
    proto::SecAggMember m;
    m.set_worker_id(id);
    m.set_box_key(FromKey(box_keys_.at(id)));
    m.set_mask_key(FromKey(p.mask_key));
    members.push_back(std::move(m));
  }
  server_->BeginRound(static_cast<uint64_t>(step), roster);
  for (int id : ids) {
    server_->AddBoxes(id, bundles_.at(id).boxes);
    bundles_.erase(id);  // each bundle masks one round
  }
  step_ = step;
  in_round_ = true;
  return members;
}

std::map<int, proto::HubMessage> SecureRounds::Close(const std::vector<Update>& updates) {
  for (const Update& u : updates) {
    std::memcpy(bits_.data(), u.values + begin_, bits_.size() * sizeof(uint32_t));
    server_->AddMasked(u.id, 0, bits_.data(), bits_.size());
    server_->Submitted(u.id, u.weight);
  }
  const secagg::UnmaskRequest request = server_->CloseRound();  // throws when too few
  std::map<int, proto::HubMessage> out;
  for (const auto& [id, boxes] : request.boxes_for) {
    proto::SecAggUnmask* u = out[id].mutable_secagg_unmask();
    u->set_step(step_);
    for (int s : request.survivors) u->add_survivors(s);
    for (int d : request.dropped) u->add_dropped(d);
    for (const secagg::SealedShare& b : boxes) {
      proto::SealedShare* p = u->add_boxes();
      p->set_from(b.from);
      p->set_to(b.to);
      p->set_kind(ProtoKind(b.kind));
      p->set_seq(b.seq);
      p->set_box(b.box);
    }
  }
  return out;
}

std::string SecureRounds::OnReveal(int id, const proto::SecAggReveal& reveal) {
  // Late: the round was unmasked from the others' shares. Nothing to do.
  if (!in_round_ || reveal.step() != step_) return "";
  std::vector<secagg::RevealedShare> shares;
  try {
    for (const proto::RevealedShare& r : reveal.shares())
      shares.push_back({r.owner(), KindOf(r.kind()), r.share()});
    server_->AddRevealed(id, shares);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

const std::vector<float>& SecureRounds::Finish() {
  server_->Finish(average_.data() + begin_);
  in_round_ = false;
  return average_;
}

}  // namespace mt
