// The version of hub.proto's protocol that hub and worker compare at join,
// apart from proto/wire.h so that what only prints it (core/cli/version.cc)
// does not include the service's messages.
#pragma once

#include <cstdint>

namespace mt::wire {

// 2: compressed gradients, memory budgets and LeftOut.
// 3: one schema: enums and optional fields instead of strings and -1,
//    optimizer state as a message, dead fields removed.
// 4: rounds of local steps (Assignment.local_steps, stride).
// 5: a state leaves out the optimizer's slots while it has never stepped.
// 6: gradients and results travel in segments, last layer first
//    (JoinReply.segments), so they overlap the backward pass.
// 7: rounds overlap the exchange (JoinReply.overlap_rounds); workers report
//    the exchange they saw (GradientChunk.exchange_ms).
// 9: graph models; frozen layers (JoinReply.frozen_layers) below the
//    lowest trained one send nothing; running statistics at join.
// 10: mthub --trace: JoinReply.trace, StepPlan.hub_time_us, GradientChunk.trace.
// 11: each round's encoding in its plan (StepPlan.compression), each chunk and
//     result says its own (--compress auto changes it during a run).
// 12: COMPRESSION_LOWRANK, whose bytes are laid out from the model's
//     matrices by a rule both sides must share (core/compress/segment_codec.h).
// 13: Hello.compute_ms_per_sample; the hub's global batch may follow it, and
//     the learning rate with it, which workers take from the step-0 state.
// 14: JoinReply.data: how workers read the dataset (image folders' hold-out
//     and bad files, augmentation of training samples, a --partition share);
//     JoinReply.prox_mu (--prox).
constexpr uint32_t kProtocolVersion = 15;

}  // namespace mt::wire
