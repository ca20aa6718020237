#include "worker/secure_update.h"

#include <cmath>
#include <cstring>

#include "worker/hub_protocol_error.h"

namespace mt {
namespace {

secagg::Key32 KeyOf(const std::string& bytes, const char* what) {
  secagg::Key32 key{};
  if (bytes.size() != key.size())
    throw HubProtocolError(std::string("hub sent a ") + what + " that is not 32 bytes");
  std::memcpy(key.data(), bytes.data(), key.size());
  return key;
}

secagg::ShareKind KindOf(proto::SecAggShareKind k) {
  if (k == proto::SECAGG_SHARE_MASK_KEY) return secagg::ShareKind::kPrivateKey;
  if (k == proto::SECAGG_SHARE_SELF_SEED) return secagg::ShareKind::kSelfSeed;
  throw HubProtocolError("hub sent a share of no known kind");
}

}  // namespace

SecureUpdate::SecureUpdate(const proto::JoinReply& join, size_t begin)
    : worker_id_(join.worker_id()), begin_(begin) {
  const proto::SecureAggregation& s = join.secure_aggregation();
  secagg::FixedPoint fp;
  // The ring's range is fixed by the scale (fixed_point.h): a clip that is
  // no power of two, or far from the default, is no hub of this build's.
  if (!(s.clip() > 0) || std::ldexp(1.0F, std::ilogb(s.clip())) != s.clip() || s.clip() > 1024)
    throw HubProtocolError("hub sent a secure aggregation clip of " + std::to_string(s.clip()));
  if (s.threshold() < 1 || worker_id_ < 0)
    throw HubProtocolError("hub sent a secure aggregation threshold of " +
                           std::to_string(s.threshold()));
  fp.clip = s.clip();
  client_ = std::make_unique<secagg::SecAggClient>(worker_id_, s.epoch(), s.threshold(), fp);
}

std::string SecureUpdate::box_key() const {
  const secagg::Key32& k = client_->box_public();
  return std::string(k.begin(), k.end());
}

proto::WorkerMessage SecureUpdate::Bundle() {
  secagg::Bundle b;
  try {
    b = client_->PrepareBundle(holders_);
  } catch (const std::invalid_argument& e) {
    throw HubProtocolError(std::string("hub named holders this worker cannot share among: ") +
                           e.what());
  }
  proto::WorkerMessage m;
  proto::SecAggBundle* out = m.mutable_secagg_bundle();
  out->set_mask_key(std::string(b.mask_public.begin(), b.mask_public.end()));
  for (const secagg::SealedShare& s : b.boxes) {
    proto::SealedShare* p = out->add_boxes();
    p->set_from(s.from);
    p->set_to(s.to);
    p->set_kind(s.kind == secagg::ShareKind::kPrivateKey ? proto::SECAGG_SHARE_MASK_KEY
                                                         : proto::SECAGG_SHARE_SELF_SEED);
    p->set_seq(s.seq);
    p->set_box(s.box);
  }
  return m;
}

proto::WorkerMessage SecureUpdate::OnHolders(const proto::SecAggHolders& holders) {
  holders_.clear();
  for (const proto::SecAggMember& h : holders.holders())
    holders_.push_back({h.worker_id(), KeyOf(h.box_key(), "holder's box key")});
  return Bundle();
}

proto::WorkerMessage SecureUpdate::OnPlan(const proto::StepPlan& plan) {
  std::vector<secagg::Member> roster;
  for (const proto::SecAggMember& m : plan.secagg_members())
    roster.push_back({m.worker_id(), KeyOf(m.box_key(), "member's box key"),
                      KeyOf(m.mask_key(), "member's mask key")});
  int64_t total = 0, mine = 0;
  for (const proto::Assignment& a : plan.assignments()) {
    total += a.batch();
    if (a.worker_id() == worker_id_) mine = a.batch();
  }
  if (total <= 0 || mine <= 0 || static_cast<int>(roster.size()) != plan.assignments_size())
    throw HubProtocolError("hub sent a plan whose members are not its assignments");
  try {
    client_->BeginRound(static_cast<uint64_t>(plan.step()), roster);
  } catch (const std::invalid_argument& e) {
    throw HubProtocolError(std::string("hub sent a round this worker cannot mask for: ") +
                           e.what());
  }
  weight_ = static_cast<double>(mine) / static_cast<double>(total);
  step_ = plan.step();
  return Bundle();
}

void SecureUpdate::Mask(size_t first, const float* values, size_t n, uint32_t* out) {
  client_->Mask(first - begin_, values, n, weight_, out);
}

proto::WorkerMessage SecureUpdate::OnUnmask(const proto::SecAggUnmask& request) {
  if (request.step() != step_)
    throw HubProtocolError("hub asked to unmask step " + std::to_string(request.step() + 1) +
                           ", not this worker's last");
  std::vector<secagg::SealedShare> boxes;
  for (const proto::SealedShare& b : request.boxes())
    boxes.push_back({b.from(), b.to(), KindOf(b.kind()), b.seq(), b.box()});
  std::vector<secagg::RevealedShare> shares;
  try {
    shares = client_->Reveal({request.survivors().begin(), request.survivors().end()},
                             {request.dropped().begin(), request.dropped().end()}, boxes);
  } catch (const std::exception& e) {
    throw HubProtocolError(std::string("hub's unmasking request refused: ") + e.what());
  }
  proto::WorkerMessage m;
  proto::SecAggReveal* out = m.mutable_secagg_reveal();
  out->set_step(step_);
  for (const secagg::RevealedShare& s : shares) {
    proto::RevealedShare* p = out->add_shares();
    p->set_owner(s.owner);
    p->set_kind(s.kind == secagg::ShareKind::kPrivateKey ? proto::SECAGG_SHARE_MASK_KEY
                                                         : proto::SECAGG_SHARE_SELF_SEED);
    p->set_share(s.share);
  }
  return m;
}

}  // namespace mt
