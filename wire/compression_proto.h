// The codec's Compression as it travels (proto::Compression in hub.proto).
#pragma once

#include <stdexcept>
#include <string>
#include "core/compress/gradient_codec.h"

#include "hub.pb.h"

namespace mt {

inline proto::Compression ToProto(Compression c) {
  switch (c) {
    case Compression::kNone: return proto::COMPRESSION_NONE;
    case Compression::kFp16: return proto::COMPRESSION_FP16;
    case Compression::kInt8: return proto::COMPRESSION_INT8;
    case Compression::kTopK: return proto::COMPRESSION_TOPK;
    case Compression::kLowRank: return proto::COMPRESSION_LOWRANK;
  }
  return proto::COMPRESSION_NONE;
}

// Throws std::invalid_argument on a value this build does not know.
inline Compression FromProto(proto::Compression c) {
  switch (c) {
    case proto::COMPRESSION_NONE: return Compression::kNone;
    case proto::COMPRESSION_FP16: return Compression::kFp16;
    case proto::COMPRESSION_INT8: return Compression::kInt8;
    case proto::COMPRESSION_TOPK: return Compression::kTopK;
    case proto::COMPRESSION_LOWRANK: return Compression::kLowRank;
    default: break;
  }
  throw std::invalid_argument("unknown compression " + std::to_string(static_cast<int>(c)));
}

}  // namespace mt
