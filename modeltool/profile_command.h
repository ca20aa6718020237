// mtmodel profile MODEL --batches 16,32,64,128: time and memory of a few
// training steps per batch size on synthetic data, the curve the batch caps
// rely on. Peak RSS only grows within a process, so each batch size runs in
// a child of its own (this binary re-executed with the hidden `measure-batch`
// command), which reports its resident set before the model was built, the
// model's predicted memory (core/profile/memory_breakdown.h) and the peak
// the kernel measured.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/activation_precision.h"

namespace CLI {
class App;
}

namespace mt {

struct ProfileOptions {
  std::string file;
  std::vector<int> batches{16, 32, 64, 128};
  std::string device = "cpu";
  int64_t threads = 1;
  int64_t steps = 5;
  std::string json_path;
  bool recompute = false;  // replay cheap layers instead of keeping their outputs
  ActivationPrecision activation_precision = kDefaultActivationPrecision;
  int batch = 0;  // the child's one batch size
};

struct ProfileCommands {
  CLI::App* profile;  // what users run
  CLI::App* measure;  // the hidden child
};

ProfileCommands AddProfileCommands(CLI::App& app, ProfileOptions& options);
// Runs a child per batch size; prints the table; throws when a child fails.
int RunProfile(const ProfileOptions& options);
// The child: one batch size, one JSON object on stdout.
int RunMeasureBatch(const ProfileOptions& options);

}  // namespace mt
