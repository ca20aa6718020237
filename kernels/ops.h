// The numeric ops a backend may implement, one per Backend method (memory
// management, which every backend has, is not an op), and sets of them. A
// backend states the set it implements (Backend::SupportedOps); whoever
// places work on a backend checks it first.
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
  kRowScaleForward,
  kRowScaleBackward,
};
constexpr int kOpCount = static_cast<int>(Op::kRowScaleBackward) + 1;

// For logs and test names.
constexpr const char* OpName(Op op) {
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
    case Op::kRowScaleForward: return "row_scale_forward";
    case Op::kRowScaleBackward: return "row_scale_backward";
  }
  return "?";
}

// A set of ops as a bit mask: cheap to copy and compare.
static_assert(kOpCount < 64, "OpSet's mask has one bit per op");
class OpSet {
 public:
  constexpr OpSet() = default;
  constexpr OpSet(std::initializer_list<Op> ops) {
    for (Op op : ops) bits_ |= Bit(op);
  }
  static constexpr OpSet All() {
    OpSet s;
    s.bits_ = (uint64_t{1} << kOpCount) - 1;
    return s;
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
    for (int i = 0; i < kOpCount; ++i) {
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
