// Top-k sparsification in fixed blocks, the codec's COMPRESSION_TOPK: of
// every kTopKBlock values, the kTopKKept largest in magnitude travel, as
// their offsets in the block (a byte each) and int8 values under one scale
// per block; the rest are left out this time. With error feedback (the
// caller's residual) what is left out is carried into later messages, so
// over rounds nothing is lost: each value travels once it has grown large
// enough. 68 bytes per 256 values, where int8 takes 260 and floats 1024.
//
// An eighth of the values: at 8 of 256 LeNet-5 learned a third slower per
// step (2 workers, 300 steps of 128: test accuracy 0.67 against 0.84
// uncompressed); at 32, 0.81, and after an epoch 0.856 against 0.862
// (docs/benchmarks.md).
//
// Fixed blocks rather than one top-k over the whole vector: the size is a
// function of n alone (a receiver checks it before reading anything), each
// block is chosen on its own (no sort of the vector, no scratch memory), and
// a block's offsets fit in a byte.
#pragma once

#include <cstddef>
#include <string>

namespace mt {

constexpr size_t kTopKBlock = 256;
constexpr size_t kTopKKept = 32;

// Bytes for n values: per block of b values, a 4-byte scale and
// min(b, kTopKKept) offsets and values.
size_t TopKBytes(size_t n);

// As EncodeFloats (gradient_codec.h): encodes src[i] + residual[i] (residual
// may be null) into out[0..TopKBytes(n)) and leaves in residual what the
// decoder will miss. In a block, ties in magnitude keep the lower offset.
void EncodeTopK(const float* src, size_t n, float* residual, char* out);

// Decodes TopKBytes(n) bytes (the caller has checked the size) into dst,
// zeros where nothing was sent. "" or why the bytes are malformed: a bad
// scale, or offsets that are not strictly increasing inside the block.
std::string DecodeTopK(const char* bytes, size_t n, float* dst);

}  // namespace mt
