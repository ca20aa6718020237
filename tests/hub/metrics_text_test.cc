// /metrics as Prometheus reads it: the text a snapshot renders to parses
// line by line (a small parser of the exposition format here), every
// family is announced before its samples, histograms are cumulative and
// end at +Inf, label values are escaped; and the histogram type itself.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "hub/monitor/histogram.h"
#include "hub/monitor/prometheus_text.h"
#include "tests/support/prometheus_parser.h"

namespace mt {
namespace {

using test_support::Exposition;
using test_support::ParseValue;
using test_support::Sample;
const auto Parse = test_support::ParsePrometheus;
const auto Find = test_support::FindSamples;

StatusSnapshot ExampleSnapshot() {
  StatusSnapshot s;
  s.run.model = "lenet5";
  s.run.dataset = "fashion-mnist";
  s.run.compression = "none";
  s.run.total_steps = 100;
  s.run.workers_expected = 2;
  s.state = "training";
  s.step = 42;
  s.samples = 42 * 128;
  s.epoch = 1;
  s.loss = 0.75;
  s.samples_per_second = 1234.5;
  s.gradient_bytes_in = 1000;
  s.result_bytes_out = 900;
  for (double v : {0.004, 0.02, 0.02, 0.3, 500.0}) s.step_seconds.Observe(v);
  s.barrier_wait_seconds.Observe(0.001);
  WorkerRow a;
  a.id = 0;
  a.name = "phone \"7\"\\a\nb";  // every character the format escapes
  a.state = "active";
  a.steps = 40;
  a.batch = 64;
  a.bytes_in = 600;
  a.battery_percent = 55;
  a.charging = true;
  a.left_out_events = 2;
  a.back_events = 1;
  WorkerRow b;
  b.id = 1;
  b.name = "laptop";
  b.state = "late";
  b.steps = 41;
  s.workers = {a, b};
  return s;
}

TEST(MetricsText, ParsesWithEveryFamilyTypedBeforeItsSamples) {
  const Exposition e = Parse(PrometheusText(ExampleSnapshot()));
  for (const auto& [family, type] : e.types) {
    EXPECT_EQ(family.rfind("mt_hub_", 0), 0u) << family;
    // Counters end in _total and nothing else does.
    const bool total = family.size() > 6 && family.compare(family.size() - 6, 6, "_total") == 0;
    EXPECT_EQ(type == "counter", total) << family << " is a " << type;
  }
  ASSERT_EQ(Find(e, "mt_hub_steps_total").size(), 1u);
  EXPECT_EQ(Find(e, "mt_hub_steps_total")[0].value, 42);
  EXPECT_EQ(Find(e, "mt_hub_samples_total")[0].value, 42 * 128);
  EXPECT_EQ(Find(e, "mt_hub_loss")[0].value, 0.75);
  EXPECT_EQ(Find(e, "mt_hub_samples_per_second")[0].value, 1234.5);
  EXPECT_EQ(Find(e, "mt_hub_bytes_in_total")[0].value, 1000);
  EXPECT_EQ(Find(e, "mt_hub_bytes_out_total")[0].value, 900);
  // No evaluation yet: no test accuracy, rather than a made-up 0.
  EXPECT_TRUE(Find(e, "mt_hub_test_accuracy").empty());
  for (const Sample& s : Find(e, "mt_hub_state"))
    EXPECT_EQ(s.value, s.labels.at("state") == "training" ? 1 : 0);
}

TEST(MetricsText, HistogramBucketsAreCumulativeAndEndAtInfEqualToCount) {
  const Exposition e = Parse(PrometheusText(ExampleSnapshot()));
  for (const std::string family : {"mt_hub_step_seconds", "mt_hub_barrier_wait_seconds"}) {
    ASSERT_EQ(e.types.at(family), "histogram");
    const std::vector<Sample> buckets = Find(e, family + "_bucket");
    ASSERT_GE(buckets.size(), 2u) << family;
    double previous_le = -1, previous = 0;
    for (const Sample& b : buckets) {
      const double le = ParseValue(b.labels.at("le"));
      EXPECT_GT(le, previous_le) << family;
      EXPECT_GE(b.value, previous) << family << " le=" << b.labels.at("le");
      previous_le = le;
      previous = b.value;
    }
    EXPECT_EQ(buckets.back().labels.at("le"), "+Inf");
    ASSERT_EQ(Find(e, family + "_count").size(), 1u);
    EXPECT_EQ(buckets.back().value, Find(e, family + "_count")[0].value);
    ASSERT_EQ(Find(e, family + "_sum").size(), 1u);
  }
  const std::vector<Sample> steps = Find(e, "mt_hub_step_seconds_bucket");
  for (const Sample& b : steps) {
    if (b.labels.at("le") == "0.025") {
      EXPECT_EQ(b.value, 3);  // 0.004, 0.02, 0.02
    }
  }
  EXPECT_EQ(Find(e, "mt_hub_step_seconds_count")[0].value, 5);
  EXPECT_DOUBLE_EQ(Find(e, "mt_hub_step_seconds_sum")[0].value, 500.344);
}

TEST(MetricsText, PerWorkerSeriesCarryTheNameEscapedAndTheId) {
  const StatusSnapshot snapshot = ExampleSnapshot();
  const Exposition e = Parse(PrometheusText(snapshot));
  const std::vector<Sample> steps = Find(e, "mt_hub_worker_steps_total");
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].labels.at("worker"), snapshot.workers[0].name);  // read back unescaped
  EXPECT_EQ(steps[0].labels.at("id"), "0");
  EXPECT_EQ(steps[0].value, 40);
  EXPECT_EQ(steps[1].labels.at("worker"), "laptop");
  EXPECT_EQ(steps[1].value, 41);
  EXPECT_EQ(Find(e, "mt_hub_worker_left_out_total")[0].value, 2);
  EXPECT_EQ(Find(e, "mt_hub_worker_rejoins_total")[0].value, 1);
  EXPECT_EQ(Find(e, "mt_hub_worker_bytes_in_total")[0].value, 600);
  // Only the worker that reports a battery has a battery series.
  ASSERT_EQ(Find(e, "mt_hub_worker_battery_percent").size(), 1u);
  EXPECT_EQ(Find(e, "mt_hub_worker_battery_percent")[0].value, 55);
  EXPECT_EQ(Find(e, "mt_hub_worker_charging")[0].value, 1);
  int late = -1;
  for (const Sample& s : Find(e, "mt_hub_workers"))
    if (s.labels.at("state") == "late") late = static_cast<int>(s.value);
  EXPECT_EQ(late, 1);
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

TEST(MetricsText, AnEmptyHubStillRendersAValidExposition) {
  StatusSnapshot empty;
  const Exposition e = Parse(PrometheusText(empty));
  EXPECT_EQ(Find(e, "mt_hub_steps_total")[0].value, 0);
  EXPECT_TRUE(Find(e, "mt_hub_worker_steps_total").empty());
  EXPECT_TRUE(Find(e, "mt_hub_loss").empty());
}

TEST(FixedHistogram, CountsEachValueInTheFirstBucketThatHoldsIt) {
  FixedHistogram h({1, 2, 5});
  for (double v : {0.5, 1.0, 1.5, 5.0, 7.0}) h.Observe(v);
  EXPECT_EQ(h.Cumulative(), (std::vector<int64_t>{2, 3, 4}));  // le=1: 0.5 and 1.0
  EXPECT_EQ(h.count(), 5);                                     // +Inf holds 7 too
  EXPECT_DOUBLE_EQ(h.sum(), 15.0);
}

TEST(FixedHistogram, LeavesNonFiniteValuesOut) {
  FixedHistogram h({1});
  h.Observe(std::nan(""));
  h.Observe(std::numeric_limits<double>::infinity());
  h.Observe(0.5);
  EXPECT_EQ(h.count(), 1);
  EXPECT_DOUBLE_EQ(h.sum(), 0.5);
}

TEST(FixedHistogram, RefusesBoundsOutOfOrderOrInfinite) {
  EXPECT_THROW(FixedHistogram({2, 1}), std::invalid_argument);
  EXPECT_THROW(FixedHistogram({1, 1}), std::invalid_argument);
  EXPECT_THROW(FixedHistogram({1, std::numeric_limits<double>::infinity()}), std::invalid_argument);
  const std::vector<double> seconds = FixedHistogram::SecondsBuckets();
  EXPECT_NO_THROW(FixedHistogram{seconds});
}

}  // namespace
}  // namespace mt
