// Fuzzes the model spec reader and model construction
// (core/model/model_spec.h): any text must parse and build, or be refused
// with ModelSpecError, without overflowing a size or allocating beyond the
// limits of core/layers/size_limits.h (-rss_limit_mb). A spec can come from
// a file the user got, or from a hub the worker joins.
//
// MT_FUZZ_WRITE_SEEDS=DIR writes the seed corpus (the presets) and exits.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/model/model_spec.h"
#include "core/model/presets.h"
#include "kernels/cpu/cpu_backend.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* seeds = std::getenv("MT_FUZZ_WRITE_SEEDS")) {
    std::filesystem::create_directories(seeds);
    for (const std::string& name : mt::PresetNames())
      std::ofstream(std::string(seeds) + "/" + name) << mt::PresetSpecText(name);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static mt::kernels::CpuBackend backend(1);
  try {
    const auto model = mt::BuildModel(
        mt::ParseModelSpec(std::string(reinterpret_cast<const char*>(data), size), "fuzz"),
        backend);
    (void)model->MemoryBytes(64);
  } catch (const mt::ModelSpecError&) {
    // Refused with a reason: the right answer.
  }
  return 0;
}
