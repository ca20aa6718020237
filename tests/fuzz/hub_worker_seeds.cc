// The hub_worker_messages fuzzer's seeds: scripts written as the harness
// reads them (reversed).
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/fuzz/hub_worker_script.h"

namespace mt_fuzz {
namespace {

using namespace hub_worker_ops;  // NOLINT: the script's opcodes

class SeedWriter {
 public:
  SeedWriter& U8(uint8_t v) {
    bytes_.push_back(v);
    return *this;
  }
  SeedWriter& U64(uint64_t v) {  // most significant byte first, as it is read
    for (int i = 7; i >= 0; --i) U8(static_cast<uint8_t>(v >> (8 * i)));
    return *this;
  }
  SeedWriter& Act(Op op, uint8_t target = 0, uint8_t how = 0) { return U8(op).U8(target).U8(how); }
  SeedWriter& Workers(int n) {  // Join and Hello, honestly
    for (int i = 0; i < n; ++i) Act(kJoin, static_cast<uint8_t>(i));
    for (int i = 0; i < n; ++i) Act(kHello, static_cast<uint8_t>(i));
    return *this;
  }
  // All n send the whole gradient; threaded, the last one's comes while
  // the run thread waits at the barrier.
  SeedWriter& Step(int n, bool threaded = false) {
    Act(kPublish);
    for (int i = 0; i < (threaded ? n - 1 : n); ++i) Act(kGradient, static_cast<uint8_t>(i));
    return Act(threaded ? kThreaded : kBarrier);
  }
  void Write(const std::string& path) const {
    std::string out(bytes_.rbegin(), bytes_.rend());
    std::ofstream(path, std::ios::binary) << out;
  }

 private:
  std::vector<uint8_t> bytes_;
};

// Header bytes: b0 = model | compression << 1 (and aggregation, sync in
// its higher multiples, see Harness), b1 = workers - 1 + ..., b2 = batch
// extra, b3 = steps - 1 + ..., b4 = eval/checkpoint/optimizer/outer lr, topk at
// 36, lowrank at 72.
SeedWriter Header(uint8_t b0, uint8_t b1, uint8_t b2 = 6, uint8_t b3 = 27, uint8_t b4 = 0) {
  SeedWriter w;
  w.U8(b0).U8(b1).U8(b2).U8(b3).U8(b4);
  return w;
}

}  // namespace

void WriteHubWorkerSeeds(const std::string& dir) {
  std::filesystem::create_directories(dir);
  auto put = [&](const std::string& name, const SeedWriter& w) { w.Write(dir + "/" + name); };
  // b0: bit 0 the two-segment model; (b0 >> 1) = compression + 3 * aggregation + 12 * sync.
  const uint8_t two = 1, fp16 = 1 << 1, int8 = 2 << 1, mean = 3 << 1, sync2 = 24 << 1;
  SeedWriter w = Header(0, 0);
  w.Workers(1).Step(1).Step(1).Step(1).Step(1).Act(kFinish);
  put("one-worker", w);
  w = Header(two, 2);  // three workers, two segments, auto aggregation
  w.Workers(3).Step(3).Step(3, true).Step(3, true).Step(3);
  put("three-workers-threaded", w);
  w = Header(two | int8, 1);
  w.Workers(2).Step(2).Step(2, true).Step(2);
  put("int8-two-segments", w);
  w = Header(two, 1, 6, 27, 36);  // b4 / 36 odd: topk
  w.Workers(2).Step(2).Step(2, true).Step(2);
  put("topk-two-segments", w);
  w = Header(two, 1, 6, 27, 72);  // b4 / 72 odd: lowrank
  w.Workers(2).Step(2).Step(2, true).Step(2);
  put("lowrank-two-segments", w);
  w = Header(fp16 | mean | sync2, 1, 6, 31);
  w.Workers(2).Step(2).Step(2).Step(2, true);
  put("fp16-local-sgd", w);
  w = Header(0, 1);  // one is left out, comes back with its late gradient
  w.Workers(2).Act(kPublish).Act(kGradient, 0).Act(kBarrier).Act(kChunk, 1).Step(2);
  put("late-and-back", w);
  w = Header(0, 1);  // a NaN at position 1, then a non-finite loss
  w.Workers(2).Act(kPublish).Act(kChunk, 0, 8).U8(1).U8(0).U8(1).U8(0);
  w.Act(kGradient, 1).Act(kBarrier).Act(kJoin, 0).Act(kHello, 2).Act(kPublish);
  w.Act(kChunk, 1, 64).U8(12).U64(0x7ff8000000000000);
  w.Act(kGradient, 0).Act(kBarrier);
  put("non-finite", w);
  w = Header(two, 2);  // x FLT_MAX from one of three: refused mid-step
  w.Workers(3).Act(kPublish).Act(kGradient, 0).Act(kChunk, 1, 128).U8(3).Act(kGradient, 2);
  w.Act(kGradient, 1).Act(kBarrier).Step(2);
  put("flt-max", w);
  w = Header(0, 1);  // one leaves mid-step, its chunks still in flight
  w.Workers(2).Act(kPublish).Act(kLeave, 1).Act(kChunk, 1).Act(kGradient, 0).Act(kBarrier);
  w.Act(kClose, 1).Step(1);
  put("leave-mid-step", w);
  w = Header(0, 0);  // the stream breaks; the worker joins again
  w.Workers(1).Step(1).Act(kBreak, 0).Act(kPublish).Act(kClose, 0, 1).Act(kBarrier);
  w.Act(kJoin, 0).Act(kHello, 1).Step(1);
  put("rejoin", w);
  w = Header(0, 27);  // a token run: bad secret, wrong id, another's secret
  w.Act(kJoin, 0).Act(kJoin, 1).Act(kHello, 0, 2).U8(3).U8('a').U8('b').U8('c');
  w.Act(kHello, 0, 1).U8(0).U8(0).U8(0).U8(7).Act(kHello, 0, 4).U8(1);
  w.Act(kJoin, 2, 2).U8(0).Act(kHello, 0).Act(kHello, 1).Step(1).Act(kLeave, 0, 2).U8(0);
  put("bad-credentials", w);
  w = Header(0, 9 + 1);  // digests every step, one wrong: a resync
  w.Workers(2).Step(2).Act(kPublish).Act(kChunk, 0, 64).U8(68).U64(42);
  w.Act(kGradient, 1).Act(kBarrier).Step(2);
  put("digest", w);
  w = Header(two, 1);  // a stop at the barrier, then the end
  w.Workers(2).Act(kPublish).Act(kGradient, 0).Act(kStop).Act(kBarrier).Act(kPublish).Act(kFinish);
  put("stop", w);
  w = Header(0, 2);  // every worker's gradient is NaN: the model diverged
  w.Workers(3).Act(kPublish);
  for (int i = 0; i < 3; ++i) w.Act(kChunk, 0, 8).U8(1).U8(0).U8(0).U8(0);
  w.Act(kBarrier).Act(kPublish).Act(kFinish);
  put("diverged", w);
  // A whole run, most steps completed by the transport's thread, two
  // workers late now and then: long, so that inputs may grow long.
  w = Header(0, 2, 6, 11);
  w.Workers(3);
  for (int step = 0; step < 12; ++step) {
    if (step % 3 == 2)
      w.Act(kPublish).Act(kGradient, 0).Act(kBarrier).Act(kChunk, 1).Act(kChunk, 2);
    else
      w.Step(3, true);
  }
  put("long-run", w);
  // Local SGD, outer momentum 0.9: FLT_MAX changes two rounds running
  // overflowed the velocity, and the hub sent an infinite result (fixed).
  w = Header(144, 0);
  w.Workers(1);
  for (int i = 0; i < 3; ++i) w.Act(kPublish).Act(kChunk, 0, 128).U8(3).Act(kBarrier);
  w.Act(kPublish);
  put("outer-momentum-overflow", w);
}

}  // namespace mt_fuzz
