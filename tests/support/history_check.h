// Checks on a report's `history` (core/train/step_history.h): the points
// cover the steps this process trained exactly once, in order, and add up
// to the samples it reports; and on its `eval_history`.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

namespace mt::test_support {

// `report` is a whole --report; `first_step` is the first step this process
// trained (1 unless resumed), `last_step` the last.
inline void ExpectHistoryCovers(const nlohmann::json& report, int64_t first_step,
                                int64_t last_step) {
  ASSERT_TRUE(report.contains("history")) << report.dump(2);
  const nlohmann::json& h = report["history"];
  ASSERT_TRUE(h["points"].is_array()) << h.dump(2);
  const int64_t stride = h.value("stride", int64_t{0});
  EXPECT_GE(stride, 1);
  EXPECT_LE(h["points"].size(), 500u);
  int64_t steps = 0, samples = 0, previous = first_step - 1;
  for (const nlohmann::json& p : h["points"]) {
    const int64_t step = p.value("step", int64_t{-1});
    EXPECT_EQ(step, previous + p.value("steps", int64_t{0})) << p.dump();
    previous = step;
    steps += p.value("steps", int64_t{0});
    samples += p.value("samples", int64_t{0});
    EXPECT_TRUE(std::isfinite(p.value("loss", NAN))) << p.dump();
    EXPECT_GT(p.value("step_ms", 0.0), 0.0) << p.dump();
  }
  // Steps still pending when the run ended (fewer than a stride) are not in a point.
  EXPECT_LE(last_step - previous, stride - 1) << h.dump();
  EXPECT_EQ(steps, previous - first_step + 1);
  if (previous == last_step) {
    EXPECT_EQ(samples, report.value("samples", int64_t{-1}));
  }
}

// A report's `eval_history` holds one point at each of `steps`, in order, each
// with the samples of its steps (`batch` a step) and a later time than the
// one before; the run's test accuracy is the last point's.
inline void ExpectEvaluatedAt(const nlohmann::json& report, const std::vector<int>& steps,
                              int batch) {
  const nlohmann::json& history = report["eval_history"];
  ASSERT_EQ(history.size(), steps.size()) << history.dump();
  for (size_t i = 0; i < history.size(); ++i) {
    EXPECT_EQ(history[i]["step"], steps[i]);
    EXPECT_EQ(history[i]["samples"], batch * steps[i]);
    if (i > 0) {
      EXPECT_GT(history[i]["seconds"], history[i - 1]["seconds"]);
    }
  }
  EXPECT_EQ(report["test_accuracy"], history.back()["test_accuracy"]);
}

}  // namespace mt::test_support
