// The encoder and decoder of one segment of the exchanged parameter vector
// (proto/wire.h's gradient segments), under any Compression. The flat
// encodings (gradient_codec.h) see the segment as one vector; lowrank needs
// to know which of its floats form matrices, and keeps state between
// messages (each matrix's warm start), so each sender and receiver keeps one
// SegmentCodec per segment.
//
// Under lowrank the segment is cut into pieces in order: each matrix row
// range inside it (whole rows only, so a matrix split between segments
// still factors its part) at LowRankRank, and the runs between as int8.
// Both sides build the pieces from the same model, so nothing of the
// layout travels: a message is the pieces' bytes back to back.
//
// Not thread-safe: one per sender, and one per receiver that decodes on its
// own thread (the hub's inbox per worker). Buffers are allocated at the first
// lowrank message and reused, so the steady state allocates nothing.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/compress/gradient_codec.h"
#include "core/tensor/param_matrix.h"

namespace mt {

class SegmentCodec {
 public:
  // Floats [begin, end) of a parameter vector whose matrices are `matrices`
  // (offsets in the whole vector, any order; those outside are ignored).
  SegmentCodec(size_t begin, size_t end, const std::vector<ParamMatrix>& matrices);

  size_t Bytes(Compression c) const;

  // As EncodeFloats over the segment: src and residual point at its first
  // float. residual may be null except under lowrank.
  void Encode(Compression c, const float* src, float* residual, std::string* out);
  // As DecodeFloats: "" or why the bytes are malformed; never throws or
  // reads out of bounds.
  std::string Decode(Compression c, const char* bytes, size_t size, float* dst);

  // The matrix pieces and their ranks, for reports: (rows, cols, rank).
  struct Factored {
    size_t rows, cols, rank;
  };
  std::vector<Factored> factored() const;

 private:
  struct Piece {
    size_t begin = 0, size = 0;           // within the segment
    size_t rows = 0, cols = 0, rank = 0;  // rank 0: int8
    size_t warm_at = 0;                   // its warm start in warm_
  };

  size_t size_;
  std::vector<Piece> pieces_;
  size_t warm_floats_ = 0, scratch_floats_ = 0, lowrank_bytes_ = 0;
  std::vector<float> warm_, scratch_;
};

// One codec per segment (anything with `begin` and `end` members, as
// proto/wire.h's Segment), as a sender or receiver keeps them.
template <typename Segments>
std::vector<SegmentCodec> MakeSegmentCodecs(const Segments& segments,
                                            const std::vector<ParamMatrix>& matrices) {
  std::vector<SegmentCodec> out;
  out.reserve(segments.size());
  for (const auto& s : segments) out.emplace_back(s.begin, s.end, matrices);
  return out;
}

}  // namespace mt
