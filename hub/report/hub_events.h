// What happens in a run, as events: tests and tools observe the hub through
// these rather than through the wording of its log lines.
#pragma once

#include <cstdint>
#include <string>

namespace mt {

struct HubEvent {
  enum class Kind {
    kWorkerJoined,       // Join accepted
    kWorkerReady,        // its stream opened: it takes part from the next step
    kStepPublished,      // a step's plan went out
    kStepDone,           // a step's average was applied
    kWorkerLeftOut,      // missed a step's deadline
    kWorkerQuarantined,  // back after missing deadlines again and again: sits out a while
    kWorkerBack,         // its late gradient arrived: it rejoins next step
    kWorkerSetAside,     // it costs the group more time than it saves (hub/policy/attendance.h)
    kWorkerBroughtBack,  // set aside before, it takes part again
    kWorkerResync,       // its weights differed from the hub's: full state next step
    kWorkerDropped,      // its stream broke or it sent something refused
    kWorkerLeft,         // it said Leave
    kRejoinRefused,      // a Join by an identity dropped for hostile contributions
    kBatchesChanged,     // the split of the global batch changed
    kEvaluated,          // an evaluation on the test set (detail: its accuracy)
    kEpochEvaluated,     // the same at an epoch end
    kTargetReached,      // --target-accuracy reached (detail: the accuracy)
    kCheckpointSaved,
    kProgress,            // the run's progress line, at most one per --log-every
    kSyncPeriodChanged,   // --sync-every auto chose another H (detail: "from->to")
    kCompressionChanged,  // --compress auto chose another encoding (detail: "none->topk")
    kGlobalBatchChanged,  // the global batch followed the devices (detail: "128->77")
    kRunEnded,
  };
  Kind kind;
  int64_t step = 0;  // steps done when it happened
  int worker = -1;   // -1: not about one worker
  std::string detail;
  std::string worker_name;  // as the worker calls itself (--name)
};

const char* EventName(HubEvent::Kind kind);

class HubEventSink {
 public:
  virtual ~HubEventSink() = default;
  // Called from the hub's threads, often with its lock held: must be quick,
  // thread-safe, and must not call back into the hub.
  virtual void OnEvent(const HubEvent& event) = 0;
};

}  // namespace mt
