// How far a worker's steady clock is from the hub's, estimated as NTP does
// from round trips: the hub stamps a plan when it leaves (h_send), the
// worker notes when it arrives (w_recv) and when its gradient leaves
// (w_send), the hub notes when that arrives (h_recv). With the two legs'
// delays d1 and d2,
//
//   offset = ((w_recv - h_send) - (h_recv - w_send)) / 2
//          = true offset + (d1 - d2) / 2,
//
// so the error is half the legs' asymmetry, at most half the round trip
// (h_recv - h_send) - (w_send - w_recv). The sample with the smallest round
// trip bounds it best, and is the one kept.
#pragma once

#include <cstdint>

namespace mt::trace {

struct ClockSample {
  int64_t hub_send_us = 0, worker_receive_us = 0, worker_send_us = 0, hub_receive_us = 0;
  int64_t round_trip_us() const {
    return (hub_receive_us - hub_send_us) - (worker_send_us - worker_receive_us);
  }
  // Worker clock minus hub clock.
  int64_t offset_us() const {
    return ((worker_receive_us - hub_send_us) - (hub_receive_us - worker_send_us)) / 2;
  }
};

class ClockOffset {
 public:
  // Keeps `s` if its round trip is the smallest yet. A sample that cannot
  // be right (unstamped, time running backwards on either side, a negative
  // round trip) is ignored; returns whether it was used.
  bool Add(const ClockSample& s);

  bool known() const { return samples_ > 0; }
  int64_t samples() const { return samples_; }
  // Worker clock minus hub clock; 0 while unknown.
  int64_t offset_us() const { return best_offset_; }
  // The kept sample's round trip: twice the most the offset can be off.
  int64_t round_trip_us() const { return best_round_trip_; }

 private:
  int64_t samples_ = 0;
  int64_t best_round_trip_ = 0;
  int64_t best_offset_ = 0;
};

}  // namespace mt::trace
