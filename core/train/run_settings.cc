#include "core/train/run_settings.h"

namespace mt {

LoopSettings LoopSettingsOf(const RunSettings& s) {
  LoopSettings l;
  l.eval_every = s.eval_every;
  l.patience = s.patience;
  l.target_accuracy = s.target_accuracy;
  l.checkpoint_every = s.checkpoint_every;
  l.log_every_seconds = s.log_every_seconds;
  return l;
}

}  // namespace mt
