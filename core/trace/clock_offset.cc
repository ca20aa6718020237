#include "core/trace/clock_offset.h"

namespace mt::trace {

bool ClockOffset::Add(const ClockSample& s) {
  if (s.hub_send_us <= 0 || s.worker_receive_us == 0) return false;  // unstamped
  if (s.hub_receive_us < s.hub_send_us || s.worker_send_us < s.worker_receive_us) return false;
  const int64_t rtt = s.round_trip_us();
  if (rtt < 0) return false;
  if (samples_ == 0 || rtt < best_round_trip_) {
    best_round_trip_ = rtt;
    best_offset_ = s.offset_us();
  }
  ++samples_;
  return true;
}

}  // namespace mt::trace
