// backend_ops_bench's results: one row per case, printed as an aligned table
// and optionally written as JSON.
#pragma once

#include <cmath>
#include <string>
#include <vector>

namespace mt::kernels::bench {

// An OpenCL output further than this from the CPU's flags its row: a fast
// wrong op proves nothing.
constexpr double kMaxRelativeError = 1e-3;

struct Row {
  std::string op, shape;
  double cpu_ms = NAN;
  bool has_cl = false;
  double cl_kernel_ms = NAN, cl_copy_ms = NAN, cl_launch_ms = NAN;
  int launches = 0;
  double error = 0.0;
  std::string error_in;
};

// The table on stdout; `with_cl` adds the OpenCL columns and the warnings.
void PrintTable(const std::vector<Row>& rows, bool with_cl);

// Writes the results to `path` ({"opencl_device", "threads", "launch_ms",
// "ops": [...]}; an empty `device` and every number not measured are null).
// False if the file cannot be written.
bool WriteJson(const std::string& path, const std::string& device, int threads, double launch_ms,
               const std::vector<Row>& rows);

}  // namespace mt::kernels::bench
