// The OpenCL backend's memory, linear algebra and kernel plumbing; the
// windowed ops are in opencl_conv.cc, the elementwise ones in opencl_ops.cc.
#include "kernels/opencl/opencl_backend.h"

#include <clblast.h>

#include <algorithm>

#include "kernels/op_table.h"
#include "kernels/opencl/opencl_buffer.h"

namespace mt::kernels {
namespace {

void BlastCheck(clblast::StatusCode status, const char* routine, const std::string& device) {
  if (status != clblast::StatusCode::kSuccess)
    throw std::runtime_error(std::string("CLBlast ") + routine + " on " + device + ": status " +
                             std::to_string(static_cast<int>(status)));
}

}  // namespace

OpenClBackend::OpenClBackend(const OpenClDevice& device) : runtime_(OpenClRuntime::For(device)) {
  cl_int status = CL_SUCCESS;
  queue_ = ClQueue(clCreateCommandQueue(runtime_->context(), device.id, 0, &status));
  ClCheck(status, "clCreateCommandQueue", device.name);
}

OpenClBackend::~OpenClBackend() {
  if (queue_) clFinish(queue_.get());  // buffers may still be in use by queued work
}

cl_mem OpenClBackend::Mem(View v) {
  return v.buffer ? static_cast<OpenClBuffer*>(v.buffer)->mem() : nullptr;
}

OpSet OpenClBackend::SupportedOps() const {
  constexpr OpSet kThroughClBlast{Op::kGemm, Op::kAxpy, Op::kScale};
  // cl/*.cl (the convolutions' products through CLBlast too)
  constexpr OpSet kConvAndPool{Op::kConv2dForward, Op::kConv2dBackward, Op::kGroupedConv2d,
                               Op::kMaxPoolForward, Op::kMaxPoolBackward};
  // cl/batch_norm.cl, cl/avg_pool.cl and the clip in cl/elementwise.cl
  constexpr OpSet kNormPoolClip{Op::kAvgPoolForward,
                                Op::kAvgPoolBackward,
                                Op::kGlobalAvgPoolForward,
                                Op::kGlobalAvgPoolBackward,
                                Op::kBatchNormForwardTraining,
                                Op::kBatchNormForwardInference,
                                Op::kBatchNormBackward,
                                Op::kClipForward,
                                Op::kClipBackward};
  constexpr OpSet kElementwise{
      Op::kAddBias,        Op::kBiasGrad,        Op::kReluForward,         Op::kReluBackward,
      Op::kDropoutForward, Op::kDropoutBackward, Op::kSoftmaxCrossEntropy, Op::kArgmaxRows,
      Op::kSgdUpdate,      Op::kAdamUpdate};
  return kThroughClBlast | kConvAndPool | kElementwise | kNormPoolClip | TableOpsOf(*this);
}

KernelCall OpenClBackend::Call(const char* kernel) {
  auto it = kernels_.find(kernel);
  if (it == kernels_.end()) {
    cl_int status = CL_SUCCESS;
    ClKernel k(clCreateKernel(runtime_->program(), kernel, &status));
    ClCheck(status, (std::string("clCreateKernel(") + kernel + ")").c_str(), device_name());
    it = kernels_.emplace(kernel, std::move(k)).first;
  }
  return KernelCall(it->second.get(), device_name(), kernel);
}

// ---- memory

std::unique_ptr<Buffer> OpenClBackend::Allocate(size_t count) {
  cl_int status = CL_SUCCESS;
  const size_t bytes = std::max<size_t>(count, 1) * sizeof(float);
  ClMem mem(clCreateBuffer(runtime_->context(), CL_MEM_READ_WRITE, bytes, nullptr, &status));
  ClCheck(status, ("clCreateBuffer(" + std::to_string(bytes) + " bytes)").c_str(), device_name());
  auto buffer = std::make_unique<OpenClBuffer>(this, count, std::move(mem));
  Fill(WholeOf(*buffer), 0.0f);  // like the CPU backend: never garbage
  return buffer;
}

void OpenClBackend::Upload(const void* host, View dst) {
  if (!dst.count) return;
  ClCheck(clEnqueueWriteBuffer(queue(), Mem(dst), CL_TRUE, dst.offset * sizeof(float),
                               dst.count * sizeof(float), host, 0, nullptr, nullptr),
          "clEnqueueWriteBuffer", device_name());
}

void OpenClBackend::Download(View src, void* host) {
  if (!src.count) return;
  ClCheck(clEnqueueReadBuffer(queue(), Mem(src), CL_TRUE, src.offset * sizeof(float),
                              src.count * sizeof(float), host, 0, nullptr, nullptr),
          "clEnqueueReadBuffer", device_name());
}

void OpenClBackend::Copy(View src, View dst) {
  const size_t n = std::min(src.count, dst.count);
  if (!n) return;
  ClCheck(clEnqueueCopyBuffer(queue(), Mem(src), Mem(dst), src.offset * sizeof(float),
                              dst.offset * sizeof(float), n * sizeof(float), 0, nullptr, nullptr),
          "clEnqueueCopyBuffer", device_name());
}

void OpenClBackend::Fill(View dst, float value) {
  if (!dst.count) return;
  ClCheck(clEnqueueFillBuffer(queue(), Mem(dst), &value, sizeof(value), dst.offset * sizeof(float),
                              dst.count * sizeof(float), 0, nullptr, nullptr),
          "clEnqueueFillBuffer", device_name());
}

void OpenClBackend::Synchronize() { ClCheck(clFinish(queue()), "clFinish", device_name()); }

// ---- linear algebra

void OpenClBackend::Gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, View a,
                         View b, float beta, View c) {
  if (m == 0 || n == 0) return;
  const size_t lda = trans_a ? m : k, ldb = trans_b ? k : n;
  BlastCheck(clblast::Gemm<float>(clblast::Layout::kRowMajor,
                                  trans_a ? clblast::Transpose::kYes : clblast::Transpose::kNo,
                                  trans_b ? clblast::Transpose::kYes : clblast::Transpose::kNo, m,
                                  n, k, alpha, Mem(a), a.offset, lda, Mem(b), b.offset, ldb, beta,
                                  Mem(c), c.offset, n, queue_.ptr(), nullptr),
             "Gemm", device_name());
}

void OpenClBackend::Axpy(float alpha, View x, View y) {
  const size_t n = std::min(x.count, y.count);
  if (!n) return;
  BlastCheck(clblast::Axpy<float>(n, alpha, Mem(x), x.offset, 1, Mem(y), y.offset, 1, queue_.ptr(),
                                  nullptr),
             "Axpy", device_name());
}

void OpenClBackend::Scale(float alpha, View x) {
  if (!x.count) return;
  BlastCheck(clblast::Scal<float>(x.count, alpha, Mem(x), x.offset, 1, queue_.ptr(), nullptr),
             "Scal", device_name());
}

}  // namespace mt::kernels
