#include "hub/monitor/status_source.h"

#include <algorithm>

#include "core/compress/gradient_codec.h"

namespace mt {

StatusSnapshot TakeSnapshot(const StepCoordinator& coordinator, const LiveStatus& live) {
  StatusSnapshot out;
  coordinator.ForEachWorker([&](const WorkerSlot& s, const BatchController& controller) {
    // A Join that never opened its stream took no part: counted, not
    // listed (a flood of them would fill the table and the report).
    if (!s.attached) {
      ++out.joins_without_stream;
      ++out.joins_pending;
      return;
    }
    out.workers.push_back(WorkerRowOf(s, controller));
  });
  const DepartedWorkers departed = coordinator.departed();
  out.joins_without_stream += departed.joins_unopened;
  out.departed = {departed.workers, departed.left,
                  departed.workers - static_cast<int64_t>(departed.recent.size()),
                  departed.samples};
  out.workers.insert(out.workers.end(), departed.recent.begin(), departed.recent.end());
  std::sort(out.workers.begin(), out.workers.end(),
            [](const WorkerRow& a, const WorkerRow& b) { return a.id < b.id; });
  out.sync_every = coordinator.sync_every();
  out.compression = CompressionName(coordinator.compression());
  if (const DpAggregate& dp = coordinator.privacy(); dp.enabled()) {
    const DpSettings& set = dp.settings();
    out.privacy = PrivacyStatus{set.clip,
                                set.noise_multiplier,
                                set.delta,
                                set.target_epsilon,
                                set.noise_at == DpNoiseAt::kHub ? "hub" : "workers",
                                dp.rounds(),
                                dp.epsilon()};
  }
  live.Fill(out);
  return out;
}

}  // namespace mt
