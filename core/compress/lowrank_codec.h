// Low-rank encoding of one matrix, the codec's COMPRESSION_LOWRANK (after
// PowerSGD, Vogels et al. 2019): a rows x cols matrix M travels as two thin
// factors, P (rows x r, orthonormal columns) and Q (cols x r), with
// M ~ P Q^T, in 2r(rows + cols) bytes where int8 takes rows * cols. LeNet-5's
// fc1 (120 x 400) at rank 4: 4,176 bytes against int8's 48,752.
//
// One power iteration per message, warm-started from the previous message's
// Q (the caller keeps it): P = M Q_prev, orthonormalised; Q = M^T P. Consecutive
// gradients share their leading directions, so one iteration a message
// tracks them. Error feedback (the caller's residual) carries the rest into
// later messages, so over rounds nothing is lost.
//
// Bytes: per rank component k a float scale 2^e_k, then P as halves
// (row-major, rows x r), then Q / 2^e_k as halves (cols x r). Decoded
// M[i][j] = sum over k of P[i][k] * (Q[j][k] * 2^e_k), in k order. Every
// product of two halves (11 significant bits each) scaled by a power of two
// in [2^-78, 2^64] is an exact float, so a fused multiply-add computes the
// same sums as separate operations: an arm64 worker (which contracts) and an
// x86-64 hub (which does not) decode the same bits.
#pragma once

#include <cstddef>
#include <string>

namespace mt {

constexpr size_t kLowRankMaxRank = 4;
// The scales' exponents: at least this small, no product of halves leaves
// the normal floats; at most this large, no sum of kLowRankMaxRank of them
// overflows.
constexpr int kLowRankMinExponent = -78;
constexpr int kLowRankMaxExponent = 64;

// The rank a rows x cols matrix travels at: the largest r <= kLowRankMaxRank
// whose bytes are at most half of int8's, 0 when none is (the matrix then
// travels as int8: for a 6 x 25 kernel the factors would save nothing).
size_t LowRankRank(size_t rows, size_t cols);

// 4 r + 2 r (rows + cols).
size_t LowRankBytes(size_t rows, size_t cols, size_t rank);

// Encodes m (rows x cols, row-major) plus residual: on entry residual holds
// what earlier messages owed (zeros to start); on return, what the decoder
// will miss. out gets LowRankBytes(rows, cols, rank) bytes.
//   warm: cols x rank floats the caller keeps between messages of this
//     matrix (zeros to start: a fixed pseudo-random start is used);
//   scratch: (rows + cols) x rank floats.
// rank >= 1. Non-finite inputs are the caller's to refuse beforehand.
void EncodeLowRank(const float* m, size_t rows, size_t cols, size_t rank, float* residual,
                   float* warm, float* scratch, char* out);

// Decodes LowRankBytes(rows, cols, rank) bytes (the caller checked the size)
// into dst (rows x cols). scratch: cols x rank floats. "" or why the bytes
// are malformed: a scale that is not a power of two in range, an inf or NaN
// half. Decoded values are always finite.
std::string DecodeLowRank(const char* bytes, size_t rows, size_t cols, size_t rank, float* dst,
                          float* scratch);

}  // namespace mt
