#include "hub/coordinator/participant_summary.h"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace mt {

std::string SummariseParticipants(const Membership& members, const BatchController& controller,
                                  size_t listed) {
  struct Row {
    const WorkerSlot* slot;
    double us_per_sample;
  };
  std::vector<Row> rows;
  int late = 0;
  for (const auto& [id, s] : members.all()) {
    if (s->state == WorkerSlot::State::kLate) ++late;
    if (s->state != WorkerSlot::State::kActive || s->last_batch <= 0) continue;
    rows.push_back({s.get(), 1000 * controller.ms_per_sample(id)});
  }
  std::string out;
  char buf[192];
  if (rows.size() <= listed) {
    for (const Row& r : rows) {
      std::snprintf(buf, sizeof buf, "%s %s b%d %.0f us/sample", out.empty() ? "" : ",",
                    r.slot->name.c_str(), r.slot->last_batch, r.us_per_sample);
      out += buf;
    }
  } else {
    // Past a screen's width of workers, the spread says more than the list.
    std::vector<int> batches;
    for (const Row& r : rows) batches.push_back(r.slot->last_batch);
    std::sort(batches.begin(), batches.end());
    const Row& slowest =
        *std::max_element(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
          return a.us_per_sample < b.us_per_sample;
        });
    std::snprintf(buf, sizeof buf,
                  " %zu workers, batches %d..%d (median %d), slowest %s %.0f us/sample",
                  rows.size(), batches.front(), batches.back(), batches[batches.size() / 2],
                  slowest.slot->name.c_str(), slowest.us_per_sample);
    out += buf;
  }
  if (late > 0) out += "; " + std::to_string(late) + " left out";
  return out;
}

std::string ProgressSummary::Next(const Membership& members, const BatchController& controller,
                                  const RunMetrics& metrics, size_t listed) {
  std::string out = SummariseParticipants(members, controller, listed);
  const int64_t changes = metrics.batch_change_count - batch_changes_summarised_;
  batch_changes_summarised_ = metrics.batch_change_count;
  if (changes > 0) out += "; batches changed " + std::to_string(changes) + "x";
  return out;
}

}  // namespace mt
