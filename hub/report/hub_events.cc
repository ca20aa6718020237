#include "hub/report/hub_events.h"

namespace mt {

const char* EventName(HubEvent::Kind kind) {
  switch (kind) {
    case HubEvent::Kind::kWorkerJoined: return "worker_joined";
    case HubEvent::Kind::kWorkerReady: return "worker_ready";
    case HubEvent::Kind::kStepPublished: return "step_published";
    case HubEvent::Kind::kStepDone: return "step_done";
    case HubEvent::Kind::kWorkerLeftOut: return "worker_left_out";
    case HubEvent::Kind::kWorkerQuarantined: return "worker_quarantined";
    case HubEvent::Kind::kWorkerBack: return "worker_back";
    case HubEvent::Kind::kWorkerSetAside: return "worker_set_aside";
    case HubEvent::Kind::kWorkerBroughtBack: return "worker_brought_back";
    case HubEvent::Kind::kWorkerResync: return "worker_resync";
    case HubEvent::Kind::kWorkerDropped: return "worker_dropped";
    case HubEvent::Kind::kWorkerLeft: return "worker_left";
    case HubEvent::Kind::kRejoinRefused: return "rejoin_refused";
    case HubEvent::Kind::kBatchesChanged: return "batches_changed";
    case HubEvent::Kind::kEvaluated: return "evaluated";
    case HubEvent::Kind::kEpochEvaluated: return "epoch_evaluated";
    case HubEvent::Kind::kTargetReached: return "target_reached";
    case HubEvent::Kind::kCheckpointSaved: return "checkpoint_saved";
    case HubEvent::Kind::kProgress: return "progress";
    case HubEvent::Kind::kSyncPeriodChanged: return "sync_period_changed";
    case HubEvent::Kind::kCompressionChanged: return "compression_changed";
    case HubEvent::Kind::kGlobalBatchChanged: return "global_batch_changed";
    case HubEvent::Kind::kRunEnded: return "run_ended";
  }
  return "?";
}

}  // namespace mt
