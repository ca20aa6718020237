// How rounds exchange: how many local steps a round takes (--sync-every)
// and how what it exchanges is encoded (--compress), each fixed or chosen
// by the hub from the same measured rounds.
#pragma once

#include <optional>

#include "hub/policy/compression_choice.h"
#include "hub/policy/sync_period.h"

namespace mt {

struct ExchangePolicy {
  // `ceiling`: the longest round --sync-every auto may choose
  // (SyncPeriod::AutoRoundCeiling).
  ExchangePolicy(int sync_every, bool overlap, std::optional<Compression> compression,
                 int ceiling = SyncPeriod::kMax, int64_t compression_warmup_steps = 0)
      : sync(sync_every, overlap, ceiling), compression(compression, compression_warmup_steps) {
    // A fixed lossy encoding makes per-step exchanges inexact from the start.
    if (!this->compression.automatic())
      sync.ForgetExchange(this->compression.current() == Compression::kNone);
  }

  // A round in which every participant finished (SyncPeriod::Observe's
  // arguments). Returns which of the two changed.
  struct Changes {
    bool sync = false, compression = false;
  };
  // The encoding first: once it changes, the exchange H was sized for is
  // gone, so H waits for rounds at the new encoding (over Wi-Fi, H rose to
  // 64 on the uncompressed exchange in the round topk was chosen, and took
  // 300 steps to come down).
  Changes Observe(int64_t steps, double round_ms, double compute_ms, double seen_ms) {
    Changes c;
    if (steps >= 1)
      c.compression =
          compression.Observe(RoundExchangeMs(round_ms, compute_ms, seen_ms, sync.overlapped()),
                              compute_ms / static_cast<double>(steps));
    if (c.compression)
      sync.ForgetExchange(compression.current() == Compression::kNone);
    else
      c.sync = sync.Observe(steps, round_ms, compute_ms, seen_ms);
    return c;
  }

  SyncPeriod sync;
  CompressionChoice compression;
};

}  // namespace mt
