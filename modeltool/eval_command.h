// mtmodel eval FILE --dataset D: test accuracy and loss of a model with
// weights (ONNX or checkpoint) on a dataset's test split, as JSON.
#pragma once

#include <cstdint>
#include <string>

#include "core/data/data_settings.h"

namespace CLI {
class App;
}

namespace mt {

struct EvalOptions {
  std::string file, dataset, report;
  int64_t batch = 256;
  int64_t threads = 1;
  DataSettings data;  // --test-fraction, --skip-bad-images
};

CLI::App* AddEvalCommand(CLI::App& app, EvalOptions& options);
// Prints the JSON to stdout (and to --report); throws on a model without
// weights, a dataset that does not fit it, or an unreadable file.
int RunEval(const EvalOptions& options);

}  // namespace mt
