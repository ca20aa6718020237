#include "kernels/opencl/opencl_device.h"

#include <stdexcept>

namespace mt::kernels {
namespace {

std::string DeviceString(cl_device_id d, cl_device_info what) {
  size_t n = 0;
  if (clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  if (clGetDeviceInfo(d, what, n, s.data(), nullptr) != CL_SUCCESS) return "";
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string PlatformString(cl_platform_id p, cl_platform_info what) {
  size_t n = 0;
  if (clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  if (clGetPlatformInfo(p, what, n, s.data(), nullptr) != CL_SUCCESS) return "";
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

std::string OpenClDevice::Describe() const {
  return name + " (" + platform_name + ", " + version + ", " + (gpu ? "GPU" : "not a GPU") + ")";
}

std::vector<OpenClDevice> ListOpenClDevices() {
  std::vector<OpenClDevice> out;
  cl_uint n_platforms = 0;
  // The ICD loader answers CL_PLATFORM_NOT_FOUND_KHR when no driver is installed.
  if (clGetPlatformIDs(0, nullptr, &n_platforms) != CL_SUCCESS || n_platforms == 0) return out;
  std::vector<cl_platform_id> platforms(n_platforms);
  if (clGetPlatformIDs(n_platforms, platforms.data(), nullptr) != CL_SUCCESS) return out;
  for (cl_platform_id p : platforms) {
    cl_uint n_devices = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n_devices) != CL_SUCCESS ||
        n_devices == 0)
      continue;
    std::vector<cl_device_id> devices(n_devices);
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n_devices, devices.data(), nullptr) != CL_SUCCESS)
      continue;
    for (cl_device_id d : devices) {
      OpenClDevice dev;
      dev.platform = p;
      dev.id = d;
      dev.name = DeviceString(d, CL_DEVICE_NAME);
      dev.version = DeviceString(d, CL_DEVICE_VERSION);
      dev.platform_name = PlatformString(p, CL_PLATFORM_NAME);
      cl_device_type type = 0;
      clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof(type), &type, nullptr);
      dev.gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
      cl_ulong mem = 0;
      clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(mem), &mem, nullptr);
      dev.global_memory = mem;
      cl_uint units = 0;
      clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(units), &units, nullptr);
      dev.compute_units = static_cast<int>(units);
      out.push_back(dev);
    }
  }
  return out;
}

OpenClDevice DefaultOpenClDevice() {
  const std::vector<OpenClDevice> all = ListOpenClDevices();
  if (all.empty())
    throw std::runtime_error(
        "no OpenCL device found: no OpenCL platform is installed (on Debian: apt-get install "
        "pocl-opencl-icd "
        "for the CPU, or the GPU vendor's OpenCL driver)");
  for (const OpenClDevice& d : all)
    if (d.gpu) return d;
  return all.front();
}

}  // namespace mt::kernels
