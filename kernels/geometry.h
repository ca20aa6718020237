// Shapes of the windowed ops, shared by every backend. NCHW layout, float.
#pragma once

namespace mt::kernels {

struct ConvGeometry {
  int batch = 1;
  int in_c = 1, in_h = 1, in_w = 1;
  int out_c = 1;
  int kernel = 1;  // square
  int stride = 1;
  int pad = 0;
  // Channels split into this many independent groups: output channels
  // [i * out_c / groups, ...) read only input channels [i * in_c / groups, ...).
  // groups == in_c is a depthwise convolution. in_c and out_c divide by it.
  int groups = 1;

  int out_h() const { return (in_h + 2 * pad - kernel) / stride + 1; }
  int out_w() const { return (in_w + 2 * pad - kernel) / stride + 1; }
  int group_in_c() const { return in_c / groups; }
  int group_out_c() const { return out_c / groups; }
  // Inputs of one output: one per (input channel of its group, kernel row,
  // kernel col); the rows of the im2col matrix when groups == 1.
  int patch() const { return group_in_c() * kernel * kernel; }
  int in_size() const { return in_c * in_h * in_w; }          // per sample
  int out_size() const { return out_c * out_h() * out_w(); }  // per sample
  int weight_count() const { return out_c * patch(); }        // [out_c][in_c / groups][k][k]
};

struct PoolGeometry {
  int batch = 1;
  int channels = 1, in_h = 1, in_w = 1;
  int size = 2;  // square window
  int stride = 2;
  // Symmetric padding of pad cells on each side; padded cells are never read. A max ignores them
  // (ONNX's -inf padding); an average divides by the window's cells inside
  // the input, or by size * size when count_pad (ONNX's count_include_pad).
  // pad > 0 needs Op::kPaddedPool; pad <= size / 2, so every window
  // holds an input.
  int pad = 0;
  bool count_pad = false;

  int out_h() const { return (in_h + 2 * pad - size) / stride + 1; }
  int out_w() const { return (in_w + 2 * pad - size) / stride + 1; }
  int in_size() const { return channels * in_h * in_w; }
  int out_size() const { return channels * out_h() * out_w(); }
};

// Batch normalisation over x shaped [batch][channels][inner] (inner = H * W,
// or 1 for flat features): statistics per channel over batch * inner values.
struct BatchNormGeometry {
  int batch = 1;
  int channels = 1;
  int inner = 1;
  float epsilon = 1e-5f;
  // PyTorch's convention: running = (1 - momentum) * running + momentum * batch.
  float momentum = 0.1f;

  int per_channel() const { return batch * inner; }  // values behind each statistic
};

}  // namespace mt::kernels
