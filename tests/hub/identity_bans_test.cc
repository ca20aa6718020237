// Quarantine per identity (hub/membership/identity_bans.h, Membership::Ban): a worker
// dropped for a hostile contribution may not join again with the same
// client certificate; one that was slow, left or had no certificate may.
#include <gtest/gtest.h>

#include <string>

#include "hub/membership/membership.h"
#include "proto/wire.h"

namespace mt {
namespace {

using Code = HubStatus::Code;

AdmissionRules Rules() {
  AdmissionRules r;
  r.global_batch = 64;
  r.param_count = 100;
  r.segments = {{0, 100}};
  return r;
}

proto::JoinRequest Join() {
  proto::JoinRequest j;
  j.set_protocol_version(wire::kProtocolVersion);
  return j;
}

TEST(IdentityBans, ADroppedCertificateIsRefusedForTheRestOfTheRunWithWhy) {
  Membership m(Rules());
  WorkerSlot* bad = nullptr;
  ASSERT_TRUE(m.Admit(Join(), "ipv4:127.0.0.1:1", &bad, "SHA256:AA").ok());
  EXPECT_EQ(bad->session.identity, "SHA256:AA");
  EXPECT_TRUE(m.Ban(*bad, "its gradient points against the others'"));
  m.Remove(bad);
  for (int attempt = 0; attempt < 2; ++attempt) {
    WorkerSlot* again = nullptr;
    const HubStatus s = m.Admit(Join(), "ipv4:127.0.0.1:2", &again, "SHA256:AA");
    EXPECT_EQ(s.code, Code::kPermissionDenied);
    EXPECT_NE(s.message.find("SHA256:AA"), std::string::npos) << s.message;
    EXPECT_NE(s.message.find("points against the others'"), std::string::npos) << s.message;
    EXPECT_EQ(again, nullptr);
  }
  // Another certificate from the same address is another worker.
  WorkerSlot* other = nullptr;
  EXPECT_TRUE(m.Admit(Join(), "ipv4:127.0.0.1:3", &other, "SHA256:BB").ok());
  EXPECT_EQ(m.bans().size(), 1u);
}

TEST(IdentityBans, SlowOrLeavingWorkersAndThoseWithoutIdentityMayJoinAgain) {
  Membership m(Rules());
  WorkerSlot *slow = nullptr, *anonymous = nullptr, *again = nullptr;
  ASSERT_TRUE(m.Admit(Join(), "p", &slow, "SHA256:CC").ok());
  m.LeaveOut(slow, std::chrono::steady_clock::now());  // a timing strike, no ban
  m.Remove(slow);
  EXPECT_TRUE(m.Admit(Join(), "p", &again, "SHA256:CC").ok());
  // Without mutual TLS there is nothing to tell one worker from another.
  ASSERT_TRUE(m.Admit(Join(), "p", &anonymous).ok());
  EXPECT_FALSE(m.Ban(*anonymous, "hostile"));
  m.Remove(anonymous);
  EXPECT_TRUE(m.Admit(Join(), "p", &again).ok());
  EXPECT_EQ(m.bans().size(), 0u);
}

TEST(IdentityBans, TheListIsBounded) {
  IdentityBans bans;
  for (size_t i = 0; i < IdentityBans::kMaxBanned; ++i)
    ASSERT_TRUE(bans.Ban("SHA256:" + std::to_string(i), "x"));
  EXPECT_FALSE(bans.Ban("SHA256:one-more", "x"));
  EXPECT_FALSE(bans.Ban("SHA256:0", "again"));
  EXPECT_EQ(bans.size(), IdentityBans::kMaxBanned);
  EXPECT_EQ(bans.Why("SHA256:one-more"), nullptr);
  ASSERT_NE(bans.Why("SHA256:0"), nullptr);
  EXPECT_EQ(*bans.Why("SHA256:0"), "x");
  EXPECT_EQ(bans.Why(""), nullptr);
}

}  // namespace
}  // namespace mt
