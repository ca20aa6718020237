// Finding an OpenCL device. A machine with no OpenCL platform at all is a
// normal case (most CI runners, many phones without a vendor driver): listing
// gives an empty list, and only asking for a device throws.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/opencl/cl_error.h"

namespace mt::kernels {

struct OpenClDevice {
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  std::string name;           // "NVIDIA H100 80GB HBM3", "cpu-haswell-..."
  std::string platform_name;  // "NVIDIA CUDA", "Portable Computing Language"
  std::string version;        // "OpenCL 3.0 CUDA"
  bool gpu = false;
  uint64_t global_memory = 0;
  int compute_units = 0;

  // One line for logs and reports: "NVIDIA H100 80GB HBM3 (NVIDIA CUDA, OpenCL 3.0 CUDA, GPU)".
  std::string Describe() const;
};

// Every device of every platform; empty when there is no platform.
std::vector<OpenClDevice> ListOpenClDevices();

// The device mt uses by default: the first GPU, else the first device of any
// kind. Throws std::runtime_error saying so when the machine has none.
OpenClDevice DefaultOpenClDevice();

}  // namespace mt::kernels
