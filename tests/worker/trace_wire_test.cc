// A worker's spans on the wire (wire/trace_wire.h): what the worker
// encodes the hub decodes span for span, and the hub refuses a batch that
// would cost it unbounded rows or arithmetic.
#include <gtest/gtest.h>

#include <vector>

#include "wire/trace_wire.h"

namespace mt::trace {
namespace {

std::vector<Span> SomeSpans() {
  std::vector<Span> spans;
  const int64_t t0 = 987'654'321'000;
  for (int i = 0; i < 6; ++i) {
    Span s = MakeSpan(i % 2 ? SpanKind::kBackward : SpanKind::kForward, t0 + 100 * (5 - i),
                      t0 + 100 * (5 - i) + 40 + i, i, i < 5 ? 12 : 11);
    s.track = i == 3 ? kTrackLookahead : kTrackCompute;
    spans.push_back(s);
  }
  return spans;
}

TEST(TraceWire, WhatTheWorkerEncodesTheHubDecodes) {
  const std::vector<Span> spans = SomeSpans();
  proto::TraceSpans batch;
  EncodeSpans(spans.data(), spans.size(), 3, BatchStamps{111, 222, 987'654'400'000}, 12, &batch);
  EXPECT_EQ(CheckSpans(batch, 512), "");
  EXPECT_EQ(batch.dropped(), 3u);
  EXPECT_EQ(SampleOf(batch, 999).hub_send_us, 111);
  EXPECT_EQ(SampleOf(batch, 999).worker_receive_us, 222);
  EXPECT_EQ(SampleOf(batch, 999).hub_receive_us, 999);
  std::vector<Span> decoded;
  ForEachSpan(batch, 12, [&](const Span& s) { decoded.push_back(s); });
  ASSERT_EQ(decoded.size(), spans.size());
  for (size_t i = 0; i < spans.size(); ++i) {
    EXPECT_EQ(decoded[i].kind, spans[i].kind) << i;
    EXPECT_EQ(decoded[i].begin_us, spans[i].begin_us) << i;
    EXPECT_EQ(decoded[i].dur_us, spans[i].dur_us) << i;
    EXPECT_EQ(decoded[i].index, spans[i].index) << i;
    EXPECT_EQ(decoded[i].track, spans[i].track) << i;
    EXPECT_EQ(decoded[i].step, spans[i].step) << i;
  }
  // Small: the begins travel as differences, a few bytes a span.
  EXPECT_LT(batch.ByteSizeLong(), 30u + 8 * spans.size());
}

TEST(TraceWire, EncodingAgainReusesTheFieldsAndForgetsTheLastBatch) {
  const std::vector<Span> spans = SomeSpans();
  proto::TraceSpans batch;
  EncodeSpans(spans.data(), spans.size(), 0, BatchStamps{1, 2, 3}, 12, &batch);
  const int capacity = batch.begin_delta_us().Capacity();
  EncodeSpans(spans.data(), 2, 0, BatchStamps{4, 5, 6}, 12, &batch);
  EXPECT_EQ(batch.kind_size(), 2);
  EXPECT_EQ(batch.step_delta_size(), 2);
  EXPECT_EQ(batch.plan_hub_time_us(), 4);
  EXPECT_EQ(batch.begin_delta_us().Capacity(), capacity);
}

TEST(TraceWire, TheHubRefusesMalformedBatches) {
  const std::vector<Span> spans = SomeSpans();
  proto::TraceSpans good;
  EncodeSpans(spans.data(), spans.size(), 0, BatchStamps{1, 2, 3}, 12, &good);
  auto refused = [&](auto change) {
    proto::TraceSpans b = good;
    change(b);
    return CheckSpans(b, 512);
  };
  EXPECT_NE(refused([](auto& b) { b.add_kind(0); }), "");  // columns of different lengths
  EXPECT_NE(refused([](auto& b) { b.set_kind(0, static_cast<uint32_t>(SpanKind::kCount)); }), "");
  EXPECT_NE(refused([](auto& b) { b.set_track(0, 1000); }), "");
  EXPECT_NE(refused([](auto& b) { b.set_index(0, -5); }), "");
  EXPECT_NE(refused([](auto& b) { b.set_duration_us(0, 0x90000000u); }), "");
  EXPECT_NE(refused([](auto& b) { b.set_begin_delta_us(0, int64_t{1} << 50); }), "");
  EXPECT_NE(refused([](auto& b) { b.set_sent_us(-1); }), "");
  EXPECT_NE(refused([](auto& b) { b.set_step_delta(0, 1 << 30); }), "");
  EXPECT_NE(CheckSpans(good, spans.size() - 1), "");  // over the cap
}

}  // namespace
}  // namespace mt::trace
