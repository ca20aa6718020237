// hub/membership/membership.h against a hostile peer: only the worker that joined may
// speak for its id (session secret), the token is checked before anything
// is told, and a flood of Joins costs a bounded amount.
#include "hub/membership/membership.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "core/util/process_stats.h"
#include "proto/wire.h"

namespace mt {
namespace {

using Code = HubStatus::Code;

struct NullLink final : WorkerLink {
  bool Send(Encoded) override { return true; }
};

AdmissionRules Rules(const std::string& token = "", size_t params = 1000, int max_workers = 256) {
  AdmissionRules r;
  r.token = token;
  r.global_batch = 64;
  r.param_count = params;
  r.segments = {{0, params}};
  r.max_workers = max_workers;
  return r;
}

proto::JoinRequest Join(const std::string& token = "") {
  proto::JoinRequest j;
  j.set_protocol_version(wire::kProtocolVersion);
  j.set_token(token);
  return j;
}

proto::Hello Hello(const WorkerSlot& slot, const std::string& secret,
                   const std::string& token = "") {
  proto::Hello h;
  h.set_worker_id(slot.id);
  h.set_token(token);
  h.set_session_secret(secret);
  return h;
}

TEST(Membership, EachJoinGetsItsOwnUnguessableSecret) {
  Membership m(Rules());
  WorkerSlot *a = nullptr, *b = nullptr;
  ASSERT_TRUE(m.Admit(Join(), "p", &a).ok());
  ASSERT_TRUE(m.Admit(Join(), "p", &b).ok());
  EXPECT_EQ(a->session.secret.size(), 16u);
  EXPECT_NE(a->session.secret, b->session.secret);
}

TEST(Membership, OnlyTheWorkerThatJoinedMayOpenItsStream) {
  Membership m(Rules());
  WorkerSlot *a = nullptr, *out = nullptr;
  ASSERT_TRUE(m.Admit(Join(), "p", &a).ok());
  NullLink link;
  // Another peer naming a's id, without the secret or with a guess.
  EXPECT_EQ(m.Attach(Hello(*a, ""), &link, &out).code, Code::kUnauthenticated);
  std::string guess = a->session.secret;
  guess[15] ^= 1;
  EXPECT_EQ(m.Attach(Hello(*a, guess), &link, &out).code, Code::kUnauthenticated);
  EXPECT_EQ(a->state, WorkerSlot::State::kJoined);  // still a's to take
  ASSERT_TRUE(m.Attach(Hello(*a, a->session.secret), &link, &out).ok());
  EXPECT_EQ(out, a);
  EXPECT_TRUE(a->attached);
}

TEST(Membership, OnlyTheWorkerThatJoinedMayLeave) {
  Membership m(Rules("tok"));
  WorkerSlot *a = nullptr, *out = nullptr;
  ASSERT_TRUE(m.Admit(Join("tok"), "p", &a).ok());
  proto::LeaveRequest leave;
  leave.set_worker_id(a->id);
  leave.set_token("tok");  // a token holder, but not a
  EXPECT_EQ(m.FindLeaving(leave, &out).code, Code::kUnauthenticated);
  leave.set_session_secret(a->session.secret);
  ASSERT_TRUE(m.FindLeaving(leave, &out).ok());
  EXPECT_EQ(out, a);
}

TEST(Membership, AnUnknownIdAndAWrongSecretGetTheSameAnswer) {
  // Else a stranger could tell which worker ids exist.
  Membership m(Rules());
  WorkerSlot *a = nullptr, *out = nullptr;
  ASSERT_TRUE(m.Admit(Join(), "p", &a).ok());
  NullLink link;
  proto::Hello nobody;
  nobody.set_worker_id(4242);
  const HubStatus unknown = m.Attach(nobody, &link, &out);
  const HubStatus wrong = m.Attach(Hello(*a, "guess"), &link, &out);
  EXPECT_EQ(unknown.code, Code::kUnauthenticated);
  EXPECT_EQ(wrong.code, unknown.code);
  EXPECT_EQ(wrong.message, unknown.message);
  proto::LeaveRequest leave;
  leave.set_worker_id(4242);
  const HubStatus unknown_leave = m.FindLeaving(leave, &out);
  leave.set_worker_id(a->id);
  const HubStatus wrong_leave = m.FindLeaving(leave, &out);
  EXPECT_EQ(unknown_leave.code, Code::kUnauthenticated);
  EXPECT_EQ(wrong_leave.code, unknown_leave.code);
  EXPECT_EQ(wrong_leave.message, unknown_leave.message);
  EXPECT_EQ(wrong_leave.message, unknown.message);
}

TEST(Membership, TheTokenIsCheckedBeforeAnyIdIsLookedUp) {
  Membership m(Rules("tok"));
  WorkerSlot* out = nullptr;
  NullLink link;
  proto::Hello h;
  h.set_worker_id(4242);  // nobody's: without the token this must not be told
  EXPECT_EQ(m.Attach(h, &link, &out).code, Code::kUnauthenticated);
  proto::LeaveRequest leave;
  leave.set_worker_id(4242);
  EXPECT_EQ(m.FindLeaving(leave, &out).code, Code::kUnauthenticated);
  proto::JoinRequest old = Join();
  old.set_protocol_version(1);  // nor the protocol the hub speaks
  EXPECT_EQ(m.Admit(old, "p", &out).code, Code::kUnauthenticated);
}

TEST(Membership, AFloodOfJoinsIsBoundedAndExpires) {
  // 2,000 Joins that never open a stream, from 250 addresses: at most
  // kMaxPendingJoins get a slot, none of them holds a gradient buffer, the
  // rest are told to come back later, and the slots expire.
  const size_t params = 1 << 20;  // 4 MB a gradient: 2,000 of them would be 8 GB
  Membership m(Rules("", params));
  const int64_t rss_before = PeakRssBytes();
  int admitted = 0, busy = 0;
  for (int i = 0; i < 2000; ++i) {
    WorkerSlot* s = nullptr;
    const HubStatus st = m.Admit(Join(), "ipv4:10.0." + std::to_string(i % 250) + ".1:4000", &s);
    if (st.ok())
      ++admitted;
    else if (st.code == Code::kUnavailable)
      ++busy;
  }
  EXPECT_EQ(admitted, Membership::kMaxPendingJoins);
  EXPECT_EQ(busy, 2000 - Membership::kMaxPendingJoins);
  EXPECT_LT(PeakRssBytes() - rss_before, int64_t{100} << 20);

  const auto now = std::chrono::steady_clock::now();
  EXPECT_TRUE(m.ExpireJoins(now).empty());  // not yet
  EXPECT_EQ(m.ExpireJoins(now + Membership::kJoinExpiry).size(),
            static_cast<size_t>(Membership::kMaxPendingJoins));
  EXPECT_TRUE(m.NotGone().empty());
  WorkerSlot* s = nullptr;
  EXPECT_TRUE(m.Admit(Join(), "ipv4:10.1.1.1:5", &s).ok());  // room again
}

TEST(Membership, OneAddressCannotHoldEveryPendingJoin) {
  Membership m(Rules());
  WorkerSlot* s = nullptr;
  for (int i = 0; i < Membership::kMaxPendingJoinsPerHost; ++i)
    ASSERT_TRUE(m.Admit(Join(), "ipv4:10.9.9.9:" + std::to_string(1000 + i), &s).ok());
  // Another port of the same host is the same peer.
  EXPECT_EQ(m.Admit(Join(), "ipv4:10.9.9.9:2000", &s).code, Code::kUnavailable);
  // Someone else still gets in; so does the host once one of its joins
  // opens its stream.
  EXPECT_TRUE(m.Admit(Join(), "ipv6:[::1]:2000", &s).ok());
  NullLink link;
  WorkerSlot* out = nullptr;
  ASSERT_TRUE(m.Attach(Hello(*m.Find(0), m.Find(0)->session.secret), &link, &out).ok());
  EXPECT_TRUE(m.Admit(Join(), "ipv4:10.9.9.9:2001", &s).ok());
}

TEST(Membership, RefusesJoinsBeyondMaxWorkers) {
  Membership m(Rules("", 1000, 3));
  NullLink link;
  for (int i = 0; i < 3; ++i) {
    WorkerSlot *s = nullptr, *out = nullptr;
    ASSERT_TRUE(m.Admit(Join(), "p", &s).ok());
    ASSERT_TRUE(m.Attach(Hello(*s, s->session.secret), &link, &out).ok());
  }
  WorkerSlot* s = nullptr;
  const HubStatus st = m.Admit(Join(), "p", &s);
  EXPECT_EQ(st.code, Code::kResourceExhausted);
  EXPECT_NE(st.message.find("--max-workers"), std::string::npos) << st.message;
  // One leaves for good: its place is free again.
  m.Remove(m.Find(0));
  EXPECT_TRUE(m.Admit(Join(), "p", &s).ok());
}

TEST(Membership, AWorkerGoneForGoodHoldsNoGradientBuffer) {
  Membership m(Rules("", 1 << 16));
  WorkerSlot* s = nullptr;
  ASSERT_TRUE(m.Admit(Join(), "p", &s).ok());
  EXPECT_TRUE(s->inbox.gradient().empty());  // nothing until its first step
  s->inbox.Expect(0, 8);
  EXPECT_EQ(s->inbox.gradient().size(), size_t{1} << 16);
  m.Remove(s);
  EXPECT_TRUE(s->inbox.gradient().empty());
  EXPECT_EQ(s->inbox.gradient().capacity(), 0u);
}

TEST(Membership, AHostGuessingTheTokenIsTurnedAwayAndOthersAreNot) {
  Membership m(Rules("tok"));
  WorkerSlot* s = nullptr;
  for (int i = 0; i < PeerLimits::kMaxRefusals; ++i)
    EXPECT_EQ(
        m.Admit(Join("guess" + std::to_string(i)), "ipv4:10.0.0.9:" + std::to_string(i), &s).code,
        Code::kUnauthenticated);
  // Now even the right token from that address waits (UNAVAILABLE: retry later)...
  EXPECT_EQ(m.Admit(Join("tok"), "ipv4:10.0.0.9:77", &s).code, Code::kUnavailable);
  // ...while another address joins as ever.
  EXPECT_TRUE(m.Admit(Join("tok"), "ipv4:10.0.0.10:77", &s).ok());
}

TEST(PeerLimits, JoinsFromOneHostComeInABurstThenAtASteadyRate) {
  PeerLimits limits;
  const auto t0 = PeerLimits::Clock::now();
  for (int i = 0; i < static_cast<int>(PeerLimits::kJoinBurst); ++i)
    ASSERT_EQ(limits.AdmitJoin("ipv4:10.0.0.1", t0), "") << i;
  EXPECT_NE(limits.AdmitJoin("ipv4:10.0.0.1", t0), "");
  EXPECT_EQ(limits.AdmitJoin("ipv4:10.0.0.2", t0), "");  // its own bucket
  const auto later = t0 + std::chrono::seconds(1);
  for (int i = 0; i < static_cast<int>(PeerLimits::kJoinsPerSecond); ++i)
    EXPECT_EQ(limits.AdmitJoin("ipv4:10.0.0.1", later), "") << i;
  EXPECT_NE(limits.AdmitJoin("ipv4:10.0.0.1", later), "");
}

TEST(PeerLimits, ABlockEndsAndTheTableOfHostsStaysBounded) {
  PeerLimits limits;
  const auto t0 = PeerLimits::Clock::now();
  for (int i = 0; i < PeerLimits::kMaxRefusals; ++i) limits.NoteRefusal("ipv4:10.0.0.1", t0);
  EXPECT_NE(limits.AdmitJoin("ipv4:10.0.0.1", t0), "");
  EXPECT_EQ(limits.AdmitJoin("ipv4:10.0.0.1", t0 + PeerLimits::kBlock + std::chrono::seconds(1)),
            "");
  // Refusals spread wider than the window never add up to a block.
  for (int i = 0; i < 3 * PeerLimits::kMaxRefusals; ++i)
    limits.NoteRefusal("ipv4:10.0.0.2", t0 + i * PeerLimits::kRefusalWindow / 4);
  EXPECT_EQ(limits.AdmitJoin("ipv4:10.0.0.2", t0 + 10 * PeerLimits::kRefusalWindow), "");
  // A flood of addresses: the oldest are forgotten, so the table stays bounded.
  for (size_t i = 0; i < 3 * PeerLimits::kMaxHosts; ++i)
    limits.AdmitJoin("ipv6:[::" + std::to_string(i) + "]", t0 + std::chrono::milliseconds(i));
  EXPECT_EQ(limits.hosts(), PeerLimits::kMaxHosts);
}

WorkerRow RowOf(const WorkerSlot& s) {
  WorkerRow row;
  row.id = s.id;
  row.name = s.name;
  row.samples = 10;
  return row;
}

TEST(Membership, ADepartedWorkersSlotIsFreedIntoBoundedCounts) {
  Membership m(Rules());
  NullLink link;
  const int kCycles = 100;
  for (int i = 0; i < kCycles; ++i) {
    WorkerSlot *s = nullptr, *out = nullptr;
    ASSERT_TRUE(m.Admit(Join(), "p", &s).ok());
    ASSERT_TRUE(m.Attach(Hello(*s, s->session.secret), &link, &out).ok());
    s->session.said_leave = i % 2 == 0;
    m.StreamClosed(s);
    m.FreeDeparted({}, RowOf);
  }
  EXPECT_TRUE(m.all().empty());
  EXPECT_EQ(m.Find(0), nullptr);
  const DepartedWorkers& d = m.departed();
  EXPECT_EQ(d.workers, kCycles);
  EXPECT_EQ(d.left, kCycles / 2);
  EXPECT_EQ(d.samples, 10 * kCycles);
  ASSERT_EQ(d.recent.size(), DepartedWorkers::kListed);
  EXPECT_EQ(d.recent.back().id, kCycles - 1);  // the latest, oldest first
  EXPECT_EQ(d.recent.front().id, kCycles - static_cast<int>(DepartedWorkers::kListed));
  // Ids are not given again: a late message for a freed id finds nothing.
  WorkerSlot* s = nullptr;
  ASSERT_TRUE(m.Admit(Join(), "p", &s).ok());
  EXPECT_EQ(s->id, kCycles);
}

TEST(Membership, ASlotStaysWhileItsStreamIsOpenOrItsStepMayReadIt) {
  Membership m(Rules());
  NullLink link;
  WorkerSlot *left = nullptr, *in_step = nullptr, *expired = nullptr, *out = nullptr;
  ASSERT_TRUE(m.Admit(Join(), "p", &left).ok());
  ASSERT_TRUE(m.Attach(Hello(*left, left->session.secret), &link, &out).ok());
  ASSERT_TRUE(m.Admit(Join(), "p", &in_step).ok());
  ASSERT_TRUE(m.Attach(Hello(*in_step, in_step->session.secret), &link, &out).ok());
  ASSERT_TRUE(m.Admit(Join(), "p", &expired).ok());
  // Said Leave, its stream not closed yet: chunks in flight still find it.
  m.Remove(left);
  m.StreamClosed(in_step);
  m.FreeDeparted({in_step}, RowOf);
  EXPECT_EQ(m.Find(left->id), left);
  EXPECT_EQ(m.Find(in_step->id), in_step);
  // A Join that never opened its stream is counted, not listed.
  EXPECT_EQ(m.ExpireJoins(std::chrono::steady_clock::now() + Membership::kJoinExpiry).size(), 1u);
  m.StreamClosed(left);
  m.FreeDeparted({}, RowOf);
  EXPECT_TRUE(m.all().empty());
  EXPECT_EQ(m.departed().workers, 2);
  EXPECT_EQ(m.departed().joins_unopened, 1);
}

}  // namespace
}  // namespace mt
