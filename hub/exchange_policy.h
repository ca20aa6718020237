// How rounds exchange: how many local steps a round takes (--sync-every)
// and how what it exchanges is encoded (--compress), each fixed or chosen
// by the hub from the same measured rounds.
#pragma once

#include <optional>

#include "hub/compression_choice.h"
#include "hub/sync_period.h"

namespace mt {

struct ExchangePolicy {
  ExchangePolicy(int sync_every, bool overlap, std::optional<Compression> compression)
      : sync(sync_every, overlap), compression(compression) {}

  // A round in which every participant finished (SyncPeriod::Observe's
  // arguments). Returns which of the two changed.
  struct Changes {
    bool sync = false, compression = false;
  };
  Changes Observe(int64_t steps, double round_ms, double compute_ms, double seen_ms) {
    const bool overlapped = sync.overlapped();  // of this round, before sync may change
    Changes c;
    c.sync = sync.Observe(steps, round_ms, compute_ms, seen_ms);
    if (steps >= 1)
      c.compression =
          compression.Observe(RoundExchangeMs(round_ms, compute_ms, seen_ms, overlapped),
                              compute_ms / static_cast<double>(steps));
    return c;
  }

  SyncPeriod sync;
  CompressionChoice compression;
};

}  // namespace mt
