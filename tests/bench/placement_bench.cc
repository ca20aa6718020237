// What --device auto decides, per whole training step: for LeNet-5 (batch
// 64) and mentee (batch 32), each layer's forward + backward on the CPU and
// on the OpenCL device, the whole step all-CPU, all-OpenCL and per-layer
// (copies between devices included), and the placement auto keeps. Unlike
// mtworker's auto, this also offers an OpenCL device that is the CPU
// itself (PoCL), so the table can be read on any machine.
//
//   placement_bench [--threads N]
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/model/auto_placement.h"
#include "core/model/model_spec.h"
#include "core/train/batch_buffer.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/support/synthetic_dataset.h"
#if MT_HAVE_OPENCL
#include "kernels/opencl/opencl_backend.h"
#include "kernels/opencl/opencl_device.h"
#endif

int main(int argc, char** argv) {
  int threads = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc && std::atoi(argv[i + 1]) > 0) {
      threads = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: placement_bench [--threads N]\n");
      return std::strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
#if MT_HAVE_OPENCL
  try {
    if (mt::kernels::ListOpenClDevices().empty()) {
      std::printf("no OpenCL platform: nothing to place\n");
      return 0;
    }
    const mt::kernels::OpenClDevice device = mt::kernels::DefaultOpenClDevice();
    mt::kernels::CpuBackend cpu(threads);
    mt::kernels::OpenClBackend cl(device);
    std::printf("cpu threads %d; opencl device %s\n", threads, device.Describe().c_str());
    const std::vector<mt::kernels::Backend*> candidates{&cpu, &cl};
    for (const auto& [name, batch] :
         std::vector<std::pair<std::string, int>>{{"lenet5", 64}, {"mentee", 32}}) {
      const mt::proto::ModelSpec spec = mt::LoadModelSpec(name);
      auto probe = mt::BuildModel(spec, cpu);
      mt::test_support::SyntheticDataset data(batch, probe->input_shape(), 10, 1);
      mt::BatchBuffer buffer(data.SampleShape(), batch);
      std::vector<uint32_t> idx(batch);
      for (int i = 0; i < batch; ++i) idx[i] = static_cast<uint32_t>(i);
      buffer.Fill(data, idx.data(), batch);
      const mt::PlacementChoice c =
          mt::ChoosePlacement(spec, cpu, candidates, buffer.images(), buffer.labels(), batch, 1, 7);
      const double cpu_ms = c.candidates[0].step_ms, chosen_ms = c.candidates[c.chosen].step_ms;
      std::printf("\n%s, batch %d\n%schosen / all-cpu step time: %.3f\n", name.c_str(), batch,
                  c.Table(candidates).c_str(), chosen_ms / cpu_ms);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "placement_bench: %s\n", e.what());
    return 1;
  }
#else
  (void)threads;
  std::printf("built without OpenCL: nothing to place\n");
#endif
  return 0;
}
