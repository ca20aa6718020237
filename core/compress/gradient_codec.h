// Lossy encodings for the float vectors the hub and workers exchange every
// step (gradients up, weight updates down). On slow Wi-Fi that traffic, not
// compute, sets the step time; the hub's --compress none|fp16|int8|topk|lowrank
// halves it (fp16), quarters it (int8) or cuts it 15-fold (topk: the largest
// 32 of every 256 values, core/compress/topk_codec.h) or more (lowrank: weight
// matrices as thin factors, core/compress/lowrank_codec.h) in both
// directions. Error feedback carries what an encoding drops into later
// steps, so training loses nothing over time.
//
// Every decoder of the same bytes must get bit-identical floats (the hub and
// each worker apply the same update), so both formats are fixed by integer
// bit manipulation and single IEEE operations, never by hardware conversions.
#pragma once

#include <cstddef>
#include <string>

namespace mt {

// kLowRank factors the matrices among the parameters (core/compress/
// lowrank_codec.h) and needs to know where they are: SegmentCodec
// (core/compress/segment_codec.h) does; the flat functions below see none
// and send a vector under kLowRank as int8.
enum class Compression { kNone, kFp16, kInt8, kTopK, kLowRank };

// Its command-line name ("none", "fp16", "int8", "topk", "lowrank"); the command lines parse
// names with cli::AddChoice.
const char* CompressionName(Compression c);

// Floats per int8 scale block: small enough that one large value costs only
// its neighbours their precision, large enough that the scales cost ~1.5%.
constexpr size_t kInt8Block = 256;
// The largest int8 scale accepted: even q = -128 times it stays finite, so a
// decoded value can never be inf. FLT_MAX / 127 would not do: 127 times its
// rounded value overflows.
constexpr float kMaxInt8Scale = 3.4028234663852886e38f / 128;

// Bytes EncodeFloats writes for n floats: none 4n, fp16 2n, int8 n + 4*ceil(n/kInt8Block),
// topk 68 per 256 (TopKBytes), lowrank as int8.
size_t EncodedBytes(Compression c, size_t n);

// Encodes src[0..n) into *out, resized to EncodedBytes(c, n); reuses out's
// capacity, so a buffer kept across steps allocates only once.
//
// residual: nullptr, or n floats of error feedback kept by the caller across
// steps (start at zero). The encoder encodes src[i] + residual[i] and stores
// what the decoder will miss, (src[i] + residual[i]) - decoded[i], back into
// residual[i]. kNone is exact: it sends src[i] + residual[i] and zeroes the
// residual (what a lossy encoding owed goes out when --compress auto turns
// back to none), and src[i] itself, bit for bit, where residual[i] is 0.
//
// fp16 clamps beyond +-65504 rather than producing inf; the caller rejects
// non-finite inputs before encoding.
void EncodeFloats(Compression c, const float* src, size_t n, float* residual, std::string* out);
// The same into out[0..EncodedBytes(c, n)), for a caller composing a message
// of several parts (segment_codec.h).
void EncodeFloatsInto(Compression c, const float* src, size_t n, float* residual, char* out);

// Decodes n floats from bytes[0..size) into dst. Returns "" on success, else
// a short reason (wrong size, a bad int8 scale, a non-finite fp16 value), in
// which case dst holds garbage. Never throws or reads out of bounds: the
// bytes come off the network. A decoded int8 or fp16 value is always finite;
// kNone values are passed through as sent.
std::string DecodeFloats(Compression c, const char* bytes, size_t size, size_t n, float* dst);

}  // namespace mt
