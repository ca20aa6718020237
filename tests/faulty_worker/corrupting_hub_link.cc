#include "tests/faulty_worker/corrupting_hub_link.h"

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "wire/compression_proto.h"

namespace mt::faulty {

CorruptingHubLink::CorruptingHubLink(HubLink& inner, const proto::JoinReply& join,
                                     Misbehaviour misbehaviour)
    : inner_(inner),
      corruption_(misbehaviour.corruption),
      claim_ms_per_sample_(misbehaviour.claim_ms_per_sample),
      hold_ms_(misbehaviour.hold_ms),
      corruptor_(misbehaviour.corruption, static_cast<size_t>(join.param_count())),
      begins_(join.segments().begin(), join.segments().end()),
      param_count_(join.param_count()) {}

size_t CorruptingHubLink::SegmentSize(uint64_t offset) const {
  uint64_t end = param_count_;
  for (const uint64_t begin : begins_)
    if (begin > offset && begin < end) end = begin;
  if (offset > end) throw std::logic_error("a gradient chunk beyond the model");
  return static_cast<size_t>(end - offset);
}

bool CorruptingHubLink::SendOther(const proto::WorkerMessage& message) {
  if (message.has_hello() && claim_ms_per_sample_ > 0) {
    proto::WorkerMessage lie = message;
    lie.mutable_hello()->set_compute_ms_per_sample(claim_ms_per_sample_);
    return inner_.Send(lie);
  }
  return inner_.Send(message);
}

bool CorruptingHubLink::Send(const proto::WorkerMessage& message) {
  if (message.has_gradient() && hold_ms_ > 0 && message.gradient().step() != held_step_) {
    held_step_ = message.gradient().step();  // its first chunk waits; the rest follow it
    std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms_));
  }
  if (!message.has_gradient() || !corruption_.active()) return SendOther(message);
  std::lock_guard<std::mutex> lock(mu_);
  outgoing_ = message;
  proto::GradientChunk& chunk = *outgoing_.mutable_gradient();
  if (chunk.packed().empty()) {
    float* values = chunk.mutable_values()->mutable_data();
    corruptor_.Apply(chunk.step(), chunk.offset(), values,
                     static_cast<size_t>(chunk.values_size()));
    return inner_.Send(outgoing_);
  }
  // Packed: decoded, corrupted and encoded again, so the hub decodes the
  // poison as it would an honest chunk.
  const size_t n = SegmentSize(chunk.offset());
  values_.resize(n);
  const Compression encoding = FromProto(chunk.compression());
  const std::string why =
      DecodeFloats(encoding, chunk.packed().data(), chunk.packed().size(), n, values_.data());
  if (!why.empty()) throw std::logic_error("cannot decode the worker's own chunk: " + why);
  corruptor_.Apply(chunk.step(), chunk.offset(), values_.data(), n);
  EncodeFloats(encoding, values_.data(), n, nullptr, chunk.mutable_packed());
  return inner_.Send(outgoing_);
}

bool CorruptingHubLink::Read(proto::HubMessage* message) {
  if (!inner_.Read(message)) return false;
  if (corruption_.kind != GradientCorruption::Kind::kAgainstAverage || !message->has_result())
    return true;
  const proto::StepResult& r = message->result();
  std::lock_guard<std::mutex> lock(mu_);
  if (r.packed().empty()) {
    corruptor_.SawAverage(r.offset(), r.values().data(), static_cast<size_t>(r.values_size()));
    return true;
  }
  const size_t n = SegmentSize(r.offset());
  average_.resize(n);
  if (DecodeFloats(FromProto(r.compression()), r.packed().data(), r.packed().size(), n,
                   average_.data())
          .empty())
    corruptor_.SawAverage(r.offset(), average_.data(), n);
  return true;
}

HubLinkDecorator CorruptEverySession(Misbehaviour misbehaviour) {
  return [misbehaviour](HubLink& link, const proto::JoinReply& join) {
    return std::make_unique<CorruptingHubLink>(link, join, misbehaviour);
  };
}

}  // namespace mt::faulty
