// The hub_worker_messages fuzzer's script language (see the top of
// hub_worker_messages_fuzz.cc): the opcodes, and the seed corpus written
// in it (MT_FUZZ_WRITE_SEEDS=DIR).
//
// The input is read with FuzzedDataProvider as integers only, which it
// takes from the input's end: a script is its input reversed. A header of
// 5 bytes picks the run (model, compression, aggregation, --sync-every,
// workers, batch, run length, ...); then each op is 3 bytes, opcode,
// target and `how` (0: as an honest worker does it), followed by the
// details a non-zero `how` asks for.
#pragma once

#include <cstdint>
#include <string>

namespace mt_fuzz {
namespace hub_worker_ops {

enum Op : uint8_t {
  kJoin,
  kHello,
  kChunk,     // one chunk, honest or mutated
  kGradient,  // the rest of the step's gradient, honestly
  kLeave,
  kClose,     // the stream ends (how & 1: broken, else closed by the worker)
  kBreak,     // the link refuses sends from now on, as a broken one does
  kPublish,   // the run thread: PublishStep (WaitForWorkers first)
  kBarrier,   // the run thread: CompleteStep, deadline already past
  kThreaded,  // CompleteStep while another thread completes the step
  kStop,      // RequestStop
  kFinish,    // the run ends: Finish, as mthub after its loop
  kOps
};

}  // namespace hub_worker_ops

// The models a run header picks from (its first byte's lowest bit).
// 15 parameters, one gradient segment: the fast case.
inline constexpr const char* kTinyModel = R"(name: "tiny" input { channels: 1 height: 1 width: 4 }
  layer { name: "flat" flatten {} } layer { name: "fc" dense { units: 3 } })";
// 17K parameters in two segments (wire::kMinSegmentFloats): results go out
// segment by segment while the other is still due. Under 128 KiB a buffer,
// so ASan's allocator reuses memory instead of mapping it afresh per input.
inline constexpr const char* kTwoSegmentModel =
    R"(name: "two" input { channels: 1 height: 1 width: 4 }
  layer { name: "flat" flatten {} } layer { name: "fc1" dense { units: 128 } }
  layer { name: "relu" relu {} } layer { name: "fc2" dense { units: 128 } })";

// Writes the seed corpus (tests/fuzz/corpus/hub_worker_messages_fuzz).
void WriteHubWorkerSeeds(const std::string& dir);

}  // namespace mt_fuzz
