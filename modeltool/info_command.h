// mtmodel info FILE: the model's layers as a table (or JSON): shapes,
// parameters, FLOPs and activation sizes per sample, and totals.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace mt {

struct InfoOptions {
  std::string file;
  bool json = false;
};

CLI::App* AddInfoCommand(CLI::App& app, InfoOptions& options);
// Writes to stdout; throws on a file that does not load.
int RunInfo(const InfoOptions& options);

}  // namespace mt
