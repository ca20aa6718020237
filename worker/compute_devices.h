// The backends a worker computes on, from --device:
//   cpu     every layer on the CPU (Eigen);
//   opencl  every layer on the OpenCL device (the first GPU, else the first
//           device), but those whose ops it lacks, which run on the CPU (a
//           warning names them); a clear error when the machine has no
//           OpenCL platform;
//   auto    each layer where it measured faster (core/model/auto_placement),
//           among the CPU and an OpenCL GPU when there is one. An OpenCL
//           device that is the CPU itself (PoCL) only competes with Eigen for
//           the same cores, so auto leaves it out. A layer is only timed
//           and placed where its ops exist.
// The CPU backend always exists: it holds the parameters and gradients and
// runs the optimizer, so a worker's weights stay bit-identical to the hub's.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "kernels/cpu/cpu_backend.h"
#include "model.pb.h"
#include "worker/device_choice.h"

namespace mt {

class ComputeDevices {
 public:
  // Throws std::runtime_error naming --device when it cannot be honoured.
  ComputeDevices(DeviceChoice device, int threads);
  ~ComputeDevices();

  kernels::CpuBackend& cpu() { return cpu_; }
  // The OpenCL backend in use, or null.
  kernels::Backend* opencl() const { return opencl_.get(); }
  DeviceChoice choice() const { return choice_; }
  // The OpenCL device's description, or empty.
  const std::string& opencl_name() const { return opencl_name_; }

  // One backend per layer of `spec`. For auto with a GPU, measures on the
  // given batch and logs the placement table.
  std::vector<kernels::Backend*> Place(const proto::ModelSpec& spec, const float* images,
                                       const int32_t* labels, int batch, uint64_t seed);

 private:
  DeviceChoice choice_;
  kernels::CpuBackend cpu_;
  std::unique_ptr<kernels::Backend> opencl_;
  std::string opencl_name_;
};

// "cpu", "opencl" or "cpu+opencl": where a model's layers and loss run, in one word.
std::string DeviceLabel(const Model& model);

}  // namespace mt
