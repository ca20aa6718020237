// mtmodel convert IN OUT: between ONNX, checkpoints and text specs, by
// extension. A source without weights (a text spec, a preset) gets freshly
// initialised ones from --seed; a text spec target keeps only the spec.
#pragma once

#include <cstdint>
#include <string>

namespace CLI {
class App;
}

namespace mt {

struct ConvertOptions {
  std::string in, out;
  uint64_t seed = 1;
};

CLI::App* AddConvertCommand(CLI::App& app, ConvertOptions& options);
// Notes (weights made up, weights dropped) go to stderr.
int RunConvert(const ConvertOptions& options);

}  // namespace mt
