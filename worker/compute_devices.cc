#include "worker/compute_devices.h"

#include <spdlog/spdlog.h>

#include <stdexcept>

#include "core/model/auto_placement.h"
#include "core/model/model_spec.h"
#if MT_HAVE_OPENCL
#include "kernels/opencl/opencl_backend.h"
#include "kernels/opencl/opencl_device.h"
#endif

namespace mt {

ComputeDevices::ComputeDevices(DeviceChoice device, int threads) : choice_(device), cpu_(threads) {
  if (device == DeviceChoice::kCpu) return;
#if MT_HAVE_OPENCL
  if (device == DeviceChoice::kOpenCl) {
    kernels::OpenClDevice d;
    try {
      d = kernels::DefaultOpenClDevice();
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string("--device opencl: ") + e.what());
    }
    opencl_ = std::make_unique<kernels::OpenClBackend>(d);
    opencl_name_ = d.Describe();
    spdlog::info("device: OpenCL {}", opencl_name_);
    return;
  }
  for (const kernels::OpenClDevice& d : kernels::ListOpenClDevices()) {
    if (!d.gpu) continue;
    opencl_ = std::make_unique<kernels::OpenClBackend>(d);
    opencl_name_ = d.Describe();
    spdlog::info("device auto: OpenCL GPU {}; layers go where they measure faster", opencl_name_);
    return;
  }
  spdlog::info("device auto: no OpenCL GPU here; training on the CPU");
#else
  if (device == DeviceChoice::kOpenCl)
    throw std::runtime_error(
        "--device opencl: this mtworker was built without OpenCL (install "
        "ocl-icd-opencl-dev, opencl-headers and libclblast-dev, then rebuild)");
  spdlog::info("device auto: built without OpenCL; training on the CPU");
#endif
}

ComputeDevices::~ComputeDevices() = default;

std::vector<kernels::Backend*> ComputeDevices::Place(const proto::ModelSpec& spec,
                                                     const float* images, const int32_t* labels,
                                                     int batch, uint64_t seed) {
  const size_t layers = static_cast<size_t>(spec.layer_size());
  if (!opencl_) return std::vector<kernels::Backend*>(layers, &cpu_);
  if (choice_ == DeviceChoice::kOpenCl) {
    // The model runs a layer whose ops the device lacks on the CPU; say so
    // up front, before training starts.
    std::vector<kernels::Backend*> all(layers, opencl_.get());
    for (const PlacementFallback& f : BuildModel(spec, cpu_, all)->fallbacks())
      spdlog::warn("device opencl: {} runs on the {}: {} lacks {}", f.name, cpu_.Name(), f.wanted,
                   f.missing.Names());
    return all;
  }
  const std::vector<kernels::Backend*> candidates{&cpu_, opencl_.get()};
  spdlog::info("device auto: timing each layer on {} and {} at batch {}", cpu_.Name(),
               opencl_->Name(), batch);
  const PlacementChoice choice =
      ChoosePlacement(spec, cpu_, candidates, images, labels, batch, seed);
  spdlog::info("device auto: placement\n{}", choice.Table(candidates));
  return choice.placement;
}

std::string DeviceLabel(const Model& model) {
  std::string label;
  const auto add = [&label](const kernels::Backend& b) {
    const std::string name = b.Name();
    if (label.find(name) == std::string::npos) label += (label.empty() ? "" : "+") + name;
  };
  for (const kernels::Backend* b : model.placement()) add(*b);
  add(model.loss_backend());
  return label;
}

}  // namespace mt
