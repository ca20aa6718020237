// Who sits out and for how long, on their own: a leave-out's strike and
// quarantine (hub/membership/quarantine.h) as hub/membership/membership.h applies them, and how
// long a step waits (hub/policy/step_deadline.h). Times are given, not waited for.
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "hub/membership/membership.h"
#include "hub/membership/quarantine.h"
#include "hub/policy/step_deadline.h"
#include "proto/wire.h"

namespace mt {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::seconds;

struct NullLink final : WorkerLink {
  bool Send(Encoded) override { return true; }
};

// A membership with one worker in the step loop, its gradient expected.
struct OneWorker {
  OneWorker() : m(Rules()) {
    proto::JoinRequest j;
    j.set_protocol_version(wire::kProtocolVersion);
    EXPECT_TRUE(m.Admit(j, "ipv4:10.0.0.1:1", &slot).ok());
    proto::Hello h;
    h.set_worker_id(slot->id);
    h.set_session_secret(slot->session.secret);
    WorkerSlot* out = nullptr;
    EXPECT_TRUE(m.Attach(h, &link, &out).ok());
    slot->state = WorkerSlot::State::kActive;
    slot->inbox.Expect(0, 8);
  }
  static AdmissionRules Rules() {
    AdmissionRules r;
    r.global_batch = 8;
    r.param_count = 10;
    r.segments = {{0, 10}};
    return r;
  }
  std::vector<WorkerSlot*> Released(Clock::time_point now) {
    std::vector<WorkerSlot*> back;
    m.ReleaseQuarantined(now, [&](WorkerSlot* s) { back.push_back(s); });
    return back;
  }

  Membership m;
  NullLink link;
  WorkerSlot* slot = nullptr;
};

TEST(AttendancePolicy, AFirstLeaveOutCostsNothingOnceTheLateGradientIsIn) {
  OneWorker w;
  const auto t0 = Clock::now();
  w.m.LeaveOut(w.slot, t0);
  EXPECT_EQ(w.slot->state, WorkerSlot::State::kLate);
  EXPECT_FALSE(w.slot->inbox.expecting()) << "its half-sent gradient is thrown away";
  EXPECT_EQ(w.slot->stats.steps_missed, 1);
  EXPECT_EQ(w.slot->quarantine.strikes, 1);
  EXPECT_TRUE(w.Released(t0).empty()) << "not before its late gradient is whole";
  w.slot->quarantine.back_ready = true;
  EXPECT_EQ(w.Released(t0), std::vector<WorkerSlot*>{w.slot});
  EXPECT_EQ(w.slot->state, WorkerSlot::State::kWaiting);
  EXPECT_FALSE(w.slot->quarantine.back_ready);
}

TEST(AttendancePolicy, LeftOutAgainItSitsOutLongerEachTimeUntilForgiven) {
  OneWorker w;
  const auto t0 = Clock::now();
  w.m.LeaveOut(w.slot, t0);
  w.slot->state = WorkerSlot::State::kActive;
  w.m.LeaveOut(w.slot, t0);
  w.slot->quarantine.back_ready = true;
  EXPECT_TRUE(w.Released(t0 + Quarantine::kFirst - seconds(1)).empty());
  EXPECT_EQ(w.Released(t0 + Quarantine::kFirst).size(), 1u);
  w.slot->state = WorkerSlot::State::kActive;
  w.m.LeaveOut(w.slot, t0);
  EXPECT_EQ(w.slot->quarantine.until, t0 + 2 * Quarantine::kFirst);
  // Enough steps taken part in since forgive it: the next leave-out is a first again.
  w.slot->quarantine.TookPart(Quarantine::kForgiveAfterSteps - 1);
  EXPECT_EQ(w.slot->quarantine.strikes, 3);
  w.slot->quarantine.TookPart(1);
  EXPECT_EQ(w.slot->quarantine.strikes, 0);
  EXPECT_EQ(Quarantine::For(16 + 2), Quarantine::kLongest);
}

TEST(StepDeadline, FixedPerStepOrThePaceTimesAFactorAboveAFloor) {
  StepDeadline fixed(
      DeadlineSettings{/*fixed_seconds=*/2.0, /*factor=*/5.0, /*floor_seconds=*/1.0});
  EXPECT_DOUBLE_EQ(fixed.Seconds(1, false), 2.0);
  EXPECT_DOUBLE_EQ(fixed.Seconds(4, false), 8.0) << "a round of 4 local steps waits 4 times";
  EXPECT_DOUBLE_EQ(fixed.Seconds(1, true), 3.0) << "the full model travels first: a floor more";

  StepDeadline adaptive(
      DeadlineSettings{/*fixed_seconds=*/0, /*factor=*/5.0, /*floor_seconds=*/1.0});
  EXPECT_DOUBLE_EQ(adaptive.Seconds(1, false), 1.0) << "no pace yet: the floor";
  adaptive.ObservePace(0.5);
  EXPECT_DOUBLE_EQ(adaptive.Seconds(1, false), 2.5);
  adaptive.ObservePace(1.5);  // smoothed: 0.8 * 0.5 + 0.2 * 1.5 = 0.7
  EXPECT_DOUBLE_EQ(adaptive.Seconds(2, false), 5.0 * 0.7 * 2);

  const auto t0 = Clock::now();
  fixed.Start(t0);
  EXPECT_EQ(fixed.Deadline(1, false), t0 + seconds(2));
  fixed.Extend(seconds(3));  // the hub's own evaluation inside the step
  EXPECT_EQ(fixed.Deadline(1, false), t0 + seconds(5));
  fixed.Start(t0 + seconds(10));
  EXPECT_EQ(fixed.Deadline(1, false), t0 + seconds(12)) << "a new step drops the extension";
}

}  // namespace
}  // namespace mt
