#include "core/compress/segment_codec.h"

#include <algorithm>
#include <stdexcept>

#include "core/compress/lowrank_codec.h"

namespace mt {

SegmentCodec::SegmentCodec(size_t begin, size_t end, const std::vector<ParamMatrix>& matrices)
    : size_(end > begin ? end - begin : 0) {
  std::vector<ParamMatrix> sorted;
  for (const ParamMatrix& m : matrices)
    if (m.rows > 0 && m.cols > 0) sorted.push_back(m);
  std::sort(sorted.begin(), sorted.end(),
            [](const ParamMatrix& a, const ParamMatrix& b) { return a.begin < b.begin; });
  size_t cursor = begin;  // everything before it has a piece
  auto vector_up_to = [&](size_t at) {
    if (at > cursor) pieces_.push_back({cursor - begin, at - cursor, 0, 0, 0, 0});
    cursor = std::max(cursor, at);
  };
  for (const ParamMatrix& m : sorted) {
    const size_t m_end = m.begin + m.rows * m.cols;
    const size_t a = std::max({begin, m.begin, cursor}), b = std::min(end, m_end);
    if (a >= b) continue;
    // Whole rows only: a matrix split between segments factors its part.
    const size_t first_row = (a - m.begin + m.cols - 1) / m.cols, last_row = (b - m.begin) / m.cols;
    if (last_row <= first_row) continue;
    const size_t rows = last_row - first_row, rank = LowRankRank(rows, m.cols);
    if (rank == 0) continue;
    const size_t at = m.begin + first_row * m.cols;
    vector_up_to(at);
    pieces_.push_back({at - begin, rows * m.cols, rows, m.cols, rank, warm_floats_});
    cursor = at + rows * m.cols;
    warm_floats_ += m.cols * rank;
    scratch_floats_ = std::max(scratch_floats_, (rows + m.cols) * rank);
  }
  vector_up_to(end);
  for (const Piece& p : pieces_)
    lowrank_bytes_ +=
        p.rank ? LowRankBytes(p.rows, p.cols, p.rank) : EncodedBytes(Compression::kInt8, p.size);
}

size_t SegmentCodec::Bytes(Compression c) const {
  return c == Compression::kLowRank ? lowrank_bytes_ : EncodedBytes(c, size_);
}

std::vector<SegmentCodec::Factored> SegmentCodec::factored() const {
  std::vector<Factored> out;
  for (const Piece& p : pieces_)
    if (p.rank) out.push_back({p.rows, p.cols, p.rank});
  return out;
}

void SegmentCodec::Encode(Compression c, const float* src, float* residual, std::string* out) {
  if (c != Compression::kLowRank) return EncodeFloats(c, src, size_, residual, out);
  if (!residual) throw std::invalid_argument("lowrank encoding needs error feedback (a residual)");
  out->resize(lowrank_bytes_);
  if (warm_.size() != warm_floats_) warm_.assign(warm_floats_, 0.0f);  // once
  if (scratch_.size() != scratch_floats_) scratch_.assign(scratch_floats_, 0.0f);
  char* at = out->empty() ? nullptr : &(*out)[0];
  for (const Piece& p : pieces_) {
    if (p.rank) {
      EncodeLowRank(src + p.begin, p.rows, p.cols, p.rank, residual + p.begin,
                    warm_.data() + p.warm_at, scratch_.data(), at);
      at += LowRankBytes(p.rows, p.cols, p.rank);
    } else {
      EncodeFloatsInto(Compression::kInt8, src + p.begin, p.size, residual + p.begin, at);
      at += EncodedBytes(Compression::kInt8, p.size);
    }
  }
}

std::string SegmentCodec::Decode(Compression c, const char* bytes, size_t size, float* dst) {
  if (c != Compression::kLowRank) return DecodeFloats(c, bytes, size, size_, dst);
  if (size != lowrank_bytes_)
    return "lowrank: " + std::to_string(size) + " bytes for " + std::to_string(size_) +
           " values, expected " + std::to_string(lowrank_bytes_);
  if (scratch_.size() != scratch_floats_) scratch_.assign(scratch_floats_, 0.0f);  // once
  for (const Piece& p : pieces_) {
    std::string why;
    size_t bytes_of;
    if (p.rank) {
      bytes_of = LowRankBytes(p.rows, p.cols, p.rank);
      why = DecodeLowRank(bytes, p.rows, p.cols, p.rank, dst + p.begin, scratch_.data());
    } else {
      bytes_of = EncodedBytes(Compression::kInt8, p.size);
      why = DecodeFloats(Compression::kInt8, bytes, bytes_of, p.size, dst + p.begin);
    }
    if (!why.empty()) return why;
    bytes += bytes_of;
  }
  return "";
}

}  // namespace mt
