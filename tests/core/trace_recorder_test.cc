// The span recorder (core/trace/): spans kept in order with their rows,
// bounded when full (the first kept, the rest counted), safe from several
// threads, and nothing at all recorded through a null sink.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "core/trace/span.h"
#include "core/trace/trace_recorder.h"

namespace mt::trace {
namespace {

TEST(TraceRecorder, KeepsSpansInOrderOnTheirThreadsRows) {
  TraceRecorder recorder(16, /*default_track=*/kTrackStep);
  recorder.Add(MakeSpan(SpanKind::kReduce, 100, 150, 2, 7));
  {
    const ScopedTrack run(kTrackRun);
    recorder.Add(MakeSpan(SpanKind::kBarrierWait, 90, 200, -1, 7));
    Span explicit_row = MakeSpan(SpanKind::kReceive, 95, 140, 3, 7);
    explicit_row.track = kTrackReceiveBase + 3;
    recorder.Add(explicit_row);
  }
  recorder.Add(MakeSpan(SpanKind::kOptimizer, 210, 205));  // ends before it begins: empty
  const std::vector<Span> spans = recorder.Spans();
  ASSERT_EQ(spans.size(), 4u);
  EXPECT_EQ(spans[0].kind, SpanKind::kReduce);
  EXPECT_EQ(spans[0].begin_us, 100);
  EXPECT_EQ(spans[0].dur_us, 50);
  EXPECT_EQ(spans[0].index, 2);
  EXPECT_EQ(spans[0].step, 7);
  EXPECT_EQ(spans[0].track, kTrackStep);
  EXPECT_EQ(spans[1].track, kTrackRun);
  EXPECT_EQ(spans[2].track, kTrackReceiveBase + 3);
  EXPECT_EQ(spans[3].dur_us, 0);
  EXPECT_EQ(spans[3].track, kTrackStep);  // the ScopedTrack has ended
  EXPECT_EQ(recorder.dropped(), 0);
}

TEST(TraceRecorder, AFullBufferKeepsTheFirstSpansAndCountsTheRest) {
  TraceRecorder recorder(4);
  for (int i = 0; i < 10; ++i) recorder.Add(MakeSpan(SpanKind::kStep, i * 10, i * 10 + 5, -1, i));
  const std::vector<Span> spans = recorder.Spans();
  ASSERT_EQ(spans.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(spans[static_cast<size_t>(i)].step, i);
  EXPECT_EQ(recorder.dropped(), 6);
  EXPECT_EQ(recorder.capacity(), 4u);
}

TEST(TraceRecorder, ThreadsRecordingAtOnceLoseNothingBelowCapacityAndCountTheRest) {
  TraceRecorder recorder(2500);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&recorder, t] {
      const ScopedTrack row(t);
      for (int i = 0; i < 1000; ++i) recorder.Add(MakeSpan(SpanKind::kForward, i, i + 1, t));
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(recorder.size(), 2500u);
  EXPECT_EQ(recorder.dropped(), 1500);
  for (const Span& s : recorder.Spans()) EXPECT_EQ(s.track, s.index);  // each on its own row
}

TEST(TraceRecorder, ScopedSpanRecordsItsLifetimeAndNothingWithoutASink) {
  TraceRecorder recorder(8);
  { const ScopedSpan span(nullptr, SpanKind::kEvaluation); }
  EXPECT_EQ(recorder.size(), 0u);
  const int64_t before = NowMicros();
  { const ScopedSpan span(&recorder, SpanKind::kEvaluation, -1, 3); }
  const int64_t after = NowMicros();
  const std::vector<Span> spans = recorder.Spans();
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].kind, SpanKind::kEvaluation);
  EXPECT_EQ(spans[0].step, 3);
  EXPECT_GE(spans[0].begin_us, before);
  EXPECT_LE(spans[0].begin_us + spans[0].dur_us, after);
}

TEST(TraceRecorder, EveryKindHasANameAndACategory) {
  for (int k = 0; k < static_cast<int>(SpanKind::kCount); ++k) {
    EXPECT_STRNE(SpanName(static_cast<SpanKind>(k)), "?") << k;
    EXPECT_NE(std::string(SpanCategory(static_cast<SpanKind>(k))), "") << k;
  }
}

}  // namespace
}  // namespace mt::trace
