// What the hub logs of its checkpoints (hub/report/checkpoint_log.h), on a made-up
// clock: every checkpoint a debug line, at most one info line a minute, and
// a summary at the end.
#include "hub/report/checkpoint_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace mt {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

TEST(CheckpointLog, OneInfoLineAMinuteHoweverManyAreWritten) {
  CheckpointLog log;
  const CheckpointLog::Clock::time_point start{};
  int info = 0;
  // 300 checkpoints, one a second for five minutes: the first, then one
  // a minute.
  for (int i = 0; i < 300; ++i) {
    const CheckpointLog::Line line =
        log.Written(10 * (i + 1), "/ck/ckpt-" + std::to_string(10 * (i + 1)) + ".mtc",
                    start + std::chrono::seconds(i));
    EXPECT_THAT(line.text, HasSubstr("step " + std::to_string(10 * (i + 1))));
    if (line.info) ++info;
    if (i == 0 || i == 60) {
      EXPECT_TRUE(line.info) << i;
    }
    if (i == 1 || i == 59) {
      EXPECT_FALSE(line.info) << i;
    }
  }
  EXPECT_EQ(info, 5);
  EXPECT_EQ(log.count(), 300);
}

TEST(CheckpointLog, SummaryCountsThemAndNamesTheLast) {
  CheckpointLog log;
  EXPECT_EQ(log.Summary(), "");
  const CheckpointLog::Clock::time_point start{};
  log.Written(100, "/ck/ckpt-100.mtc", start);
  EXPECT_EQ(log.Summary(), "1 checkpoint written, the last at step 100: /ck/ckpt-100.mtc");
  log.Written(200, "/ck/ckpt-200.mtc", start + 1s);
  log.Written(234, "/ck/ckpt-234.mtc", start + 2s);
  EXPECT_EQ(log.Summary(), "3 checkpoints written, the last at step 234: /ck/ckpt-234.mtc");
}

}  // namespace
}  // namespace mt
