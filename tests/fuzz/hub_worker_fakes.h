// The hub_worker_messages fuzzer's pieces around the harness: the script
// reader, the fake transport and event sink it hands the hub, and the
// mutations a hostile worker makes to a gradient chunk.
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <atomic>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/compress/segment_codec.h"
#include "hub/coordinator/step_coordinator.h"
#include "wire/compression_proto.h"

namespace mt_fuzz {

using mt::HubStatus;
using mt::WorkerSlot;
namespace proto = mt::proto;

[[noreturn]] inline void Fail(const char* what) {
  std::fprintf(stderr, "hub_worker_messages_fuzz: %s\n", what);
  std::abort();
}

// Reads the script (see the top of the file).
class Script {
 public:
  Script(const uint8_t* data, size_t size) : in_(data, size) {}
  bool more() { return in_.remaining_bytes() > 0; }
  uint8_t U8() { return in_.ConsumeIntegral<uint8_t>(); }
  uint16_t U16() { return in_.ConsumeIntegral<uint16_t>(); }
  uint32_t U32() { return in_.ConsumeIntegral<uint32_t>(); }
  uint64_t U64() { return in_.ConsumeIntegral<uint64_t>(); }
  // Any bit pattern: NaNs, infinities and denormals come for free.
  float F32() {
    const uint32_t bits = U32();
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  double F64() {
    const uint64_t bits = U64();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  std::string Str(size_t max) {
    std::string s(U8() % (max + 1), '\0');
    for (char& c : s) c = static_cast<char>(U8());
    return s;
  }

 private:
  FuzzedDataProvider in_;
};

// The hub keeps nothing of what it sends but this check: an average is
// checked before it goes out, so a result is always finite.
class CheckingEncoder final : public mt::MessageEncoder {
 public:
  mt::Encoded Encode(const proto::HubMessage& m) override {
    if (m.has_result())
      for (float v : m.result().values())
        if (!std::isfinite(v)) Fail("the hub sent a non-finite result");
    return std::make_shared<mt::EncodedMessage>();
  }
};

// One Train stream. It outlives StreamClosed (a TrainStream does not), so
// a send after that is caught here rather than as a use after free.
class FakeStream final : public mt::WorkerLink {
 public:
  bool Send(mt::Encoded) override {
    if (closed) Fail("the hub sent on a stream after StreamClosed returned");
    return !broken;
  }
  int worker_id = -1;
  bool open = true;  // the harness's view: the worker may still send
  std::atomic<bool> broken{false}, closed{false};
};

class CountingSink final : public mt::HubEventSink {
 public:
  void OnEvent(const mt::HubEvent& e) override {
    if (e.kind == mt::HubEvent::Kind::kStepPublished) ++published;
  }
  std::atomic<int> published{0};
};

// What the hub knows of a worker, read under its lock: where an honest
// worker's next chunk goes.
struct SlotView {
  WorkerSlot::State state = WorkerSlot::State::kGone;
  bool due = false;  // in the step, its gradient not yet whole
  size_t next = 0;   // the segment expected next
  mt::Assignment a;
};

// Segment `seg`'s values into c as an honest worker sends them under c:
// lowrank needs the model's matrices and error feedback.
inline void PackHonest(mt::Compression compression, const mt::wire::Segment& seg,
                       const std::vector<mt::ParamMatrix>& matrices,
                       const std::vector<float>& values, mt::proto::GradientChunk& c) {
  c.set_compression(mt::ToProto(compression));
  if (compression == mt::Compression::kNone) {
    c.mutable_values()->Add(values.begin(), values.end());
    return;
  }
  mt::SegmentCodec codec(seg.begin, seg.end, matrices);
  std::vector<float> residual(values.size(), 0.0f);
  codec.Encode(compression, values.data(), residual.data(), c.mutable_packed());
}

// What a hostile or broken worker changes in a chunk (how's bits); `plain`:
// the run sends values uncompressed.
inline void MutateChunk(Script& in_, bool plain, mt::proto::GradientChunk& c, uint8_t how) {
  if (how & 2) c.set_step(c.step() + static_cast<int8_t>(in_.U8()));
  if (how & 4) c.set_offset(in_.U8() & 1 ? in_.U64() : c.offset() + in_.U8() - 128);
  if (how & 8) {  // a few values replaced: non-finite, huge, tiny, any bits
    const float specials[] = {NAN, INFINITY, -INFINITY, FLT_MAX, -FLT_MAX, 1e30f, FLT_MIN / 4};
    for (int n = in_.U8() % 4; n > 0; --n) {
      const size_t at = in_.U16();
      const uint8_t kind = in_.U8();
      const float v = kind < 7 ? specials[kind] : in_.F32();
      if (plain && c.values_size() > 0)
        c.mutable_values()->Set(static_cast<int>(at % c.values_size()), v);
      else if (!plain && !c.packed().empty())
        (*c.mutable_packed())[at % c.packed().size()] = static_cast<char>(kind);
    }
  }
  if (how & 16) {  // the payload's length, or both forms of it
    switch (in_.U8() % 4) {
      case 0: c.clear_values(), c.clear_packed(); break;
      case 1: plain ? c.add_values(0.5f) : c.mutable_packed()->push_back('\x7f'); break;
      case 2:
        if (plain && c.values_size() > 0) c.mutable_values()->RemoveLast();
        if (!plain && !c.packed().empty()) c.mutable_packed()->pop_back();
        break;
      case 3: plain ? c.set_packed(in_.Str(16)) : c.add_values(in_.F32()); break;
    }
  }
  if (how & 32) c.set_last(!c.last());
  if (how & 64) {  // the step report
    const uint8_t which = in_.U8();
    const int32_t batches[] = {0, -1, INT_MAX, INT_MIN, c.batch() + 1, c.batch()};
    c.set_batch(which % 7 < 6 ? batches[which % 7] : static_cast<int32_t>(in_.U32()));
    if (which & 8) c.set_loss_sum(in_.F64());
    if (which & 16) c.set_compute_ms(in_.F64());
    if (which & 32) c.set_exchange_ms(in_.F64());
    if (which & 64) c.set_weights_digest(in_.U64());
    if (which & 128) c.clear_weights_digest();
  }
}

}  // namespace mt_fuzz
