// The numeric ops a backend may implement, one per Backend method (memory
// management, which every backend has, is not an op), and sets of them. A
// backend states the set it implements (Backend::SupportedOps); whoever
// places work on a backend checks it first. Ops defined by their kernel file
// rather than as Backend methods (kernels/op_table.h) take the ids after
// the enum's.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

namespace mt::kernels {

enum class Op : uint8_t {
  kGemm,
  kAxpy,
  kScale,
  kConv2dForward,
  kConv2dBackward,
  // Conv2dForward/Backward with ConvGeometry::groups > 1 (grouped, depthwise).
  kGroupedConv2d,
  kMaxPoolForward,
  kMaxPoolBackward,
  kAvgPoolForward,
  kAvgPoolBackward,
  kGlobalAvgPoolForward,
  kGlobalAvgPoolBackward,
  kBatchNormForwardTraining,
  kBatchNormForwardInference,
  kBatchNormBackward,
  kAddBias,
  kBiasGrad,
  kReluForward,
  kReluBackward,
  kClipForward,
  kClipBackward,
  // Every function of kernels/activation.h (one op pair for the family).
  kActivationForward,
  kActivationBackward,
  kDropoutForward,
  kDropoutBackward,
  kSoftmaxCrossEntropy,
  kArgmaxRows,
  kSgdUpdate,
  kAdamUpdate,
  // Max/AvgPoolForward/Backward with PoolGeometry::pad > 0.
  kPaddedPool,
};
// The enum's ops; table ops follow.
constexpr int kOpCount = static_cast<int>(Op::kPaddedPool) + 1;
// All ops known now: the enum's and the table ops named so far.
int OpCount();

// For logs and test names; a table op's registered name.
const char* OpName(Op op);
// The enum's names; nullptr for a table op.
constexpr const char* EnumOpName(Op op) {
  switch (op) {
    case Op::kGemm: return "gemm";
    case Op::kAxpy: return "axpy";
    case Op::kScale: return "scale";
    case Op::kConv2dForward: return "conv2d_forward";
    case Op::kConv2dBackward: return "conv2d_backward";
    case Op::kGroupedConv2d: return "grouped_conv2d";
    case Op::kMaxPoolForward: return "max_pool_forward";
    case Op::kMaxPoolBackward: return "max_pool_backward";
    case Op::kAvgPoolForward: return "avg_pool_forward";
    case Op::kAvgPoolBackward: return "avg_pool_backward";
    case Op::kGlobalAvgPoolForward: return "global_avg_pool_forward";
    case Op::kGlobalAvgPoolBackward: return "global_avg_pool_backward";
    case Op::kBatchNormForwardTraining: return "batch_norm_forward_training";
    case Op::kBatchNormForwardInference: return "batch_norm_forward_inference";
    case Op::kBatchNormBackward: return "batch_norm_backward";
    case Op::kAddBias: return "add_bias";
    case Op::kBiasGrad: return "bias_grad";
    case Op::kReluForward: return "relu_forward";
    case Op::kReluBackward: return "relu_backward";
    case Op::kClipForward: return "clip_forward";
    case Op::kClipBackward: return "clip_backward";
    case Op::kActivationForward: return "activation_forward";
    case Op::kActivationBackward: return "activation_backward";
    case Op::kDropoutForward: return "dropout_forward";
    case Op::kDropoutBackward: return "dropout_backward";
    case Op::kSoftmaxCrossEntropy: return "softmax_cross_entropy";
    case Op::kArgmaxRows: return "argmax_rows";
    case Op::kSgdUpdate: return "sgd_update";
    case Op::kAdamUpdate: return "adam_update";
    case Op::kPaddedPool: return "padded_pool";
  }
  return nullptr;
}

// A set of ops as a bit mask: cheap to copy and compare.
constexpr int kMaxOps = 64;
static_assert(kOpCount < kMaxOps, "OpSet's mask has one bit per op");
class OpSet {
 public:
  constexpr OpSet() = default;
  constexpr OpSet(std::initializer_list<Op> ops) {
    for (Op op : ops) bits_ |= Bit(op);
  }
  // Every op known now: the enum's and the table ops named so far.
  static OpSet All() {
    const int n = OpCount();
    return FromBits(n >= kMaxOps ? ~uint64_t{0} : (uint64_t{1} << n) - 1);
  }

  constexpr bool Has(Op op) const { return (bits_ & Bit(op)) != 0; }
  constexpr bool Contains(OpSet other) const { return (bits_ & other.bits_) == other.bits_; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr OpSet operator|(OpSet other) const { return FromBits(bits_ | other.bits_); }
  // The ops of this set that `other` lacks.
  constexpr OpSet operator-(OpSet other) const { return FromBits(bits_ & ~other.bits_); }
  constexpr bool operator==(OpSet other) const { return bits_ == other.bits_; }
  constexpr bool operator!=(OpSet other) const { return bits_ != other.bits_; }

  // "relu_forward, relu_backward", in enum order.
  std::string Names(const char* separator = ", ") const {
    std::string s;
    for (int i = 0; i < OpCount(); ++i) {
      if (!Has(static_cast<Op>(i))) continue;
      if (!s.empty()) s += separator;
      s += OpName(static_cast<Op>(i));
    }
    return s;
  }

 private:
  static constexpr uint64_t Bit(Op op) { return uint64_t{1} << static_cast<int>(op); }
  static constexpr OpSet FromBits(uint64_t bits) {
    OpSet s;
    s.bits_ = bits;
    return s;
  }

  uint64_t bits_ = 0;
};

}  // namespace mt::kernels
