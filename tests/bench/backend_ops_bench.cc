// Per-op timings of the CPU backend against the OpenCL backend, on the cases
// of the backend op table (tests/kernels/backend_op_cases.h): the table the
// backend tests run, so a new op is timed as soon as it has a row. For
// every case:
//   cpu            median op time on CpuBackend(--threads)
//   opencl_kernel  median of (call + Synchronize) with the data on the device
//   opencl_copy    median of uploading the case's inputs and downloading its
//                  outputs: the cost if the data lived on the host
//   opencl_launch  the op's calls in the case x the fixed cost of one tiny
//                  enqueue + Synchronize (Fill of one float): a floor, since
//                  a call may enqueue several kernels
//   ratio          opencl_kernel / cpu (above 1: OpenCL slower)
// Only the case's own op is timed (kWarmup + --repeat runs at each call);
// the ops it needs first run once. Both backends get the same inputs, and
// their outputs are compared; a max relative error above 1e-3 flags the
// row, since a fast wrong op proves nothing. Per-op placement is a
// measurement (docs/architecture.md, Placement), and this is it.
//
//   backend_ops_bench [--threads N] [--repeat N] [--op NAME] [--json FILE]
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/cli/command_line.h"
#include "core/cli/validators.h"
#include "kernels/backend.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/bench/backend_ops_report.h"
#include "tests/bench/backend_ops_run.h"

#if MT_HAVE_OPENCL
#include "kernels/opencl/opencl_backend.h"
#include "kernels/opencl/opencl_device.h"
#endif

namespace mt::kernels::bench {
namespace {

struct Flags {
  int threads = 1;
  int repeat = 20;
  std::string op;  // only the cases of ops whose name contains this
  std::string json;
};

// The flags, or the exit code to return now (--help: 0; a mistake: 2, after
// one line on stderr).
std::optional<int> ParseFlags(int argc, char** argv, Flags& f) {
  CLI::App app(
      "Times each case of the backend op table on the CPU backend and the OpenCL backend "
      "(when the build and the machine have one).",
      "backend_ops_bench");
  cli::Configure(app, "backend_ops_bench [--threads N] [--repeat N] [--op NAME] [--json FILE]");
  app.add_option("--threads", f.threads, "CPU backend threads")->transform(cli::Integer(1, 1024));
  app.add_option("--repeat", f.repeat,
                 "timed iterations per op, after " + std::to_string(kWarmup) + " warm-up runs")
      ->transform(cli::Integer(1, 1000000));
  app.add_option("--op", f.op, "only the ops whose name contains NAME (conv2d, relu_)")
      ->type_name("NAME");
  app.add_option("--json", f.json, "also write the results as JSON to FILE")->type_name("FILE");
  return cli::Parse(app, argc, argv, nullptr);
}

int Main(int argc, char** argv) {
  Flags flags;
  if (const std::optional<int> exit_code = ParseFlags(argc, argv, flags)) return *exit_code;
  TimedBackend<CpuBackend> cpu(flags.threads);

  std::unique_ptr<Backend> cl;
  OpTimer* cl_timer = nullptr;
  std::string device, no_cl_reason;
  double launch_ms = NAN;
#if MT_HAVE_OPENCL
  if (ListOpenClDevices().empty()) {
    no_cl_reason = "no OpenCL platform: OpenCL column skipped";
  } else {
    const OpenClDevice dev = DefaultOpenClDevice();
    device = dev.Describe();
    auto backend = std::make_unique<TimedBackend<OpenClBackend>>(dev);
    cl_timer = backend.get();
    launch_ms = LaunchMs(*backend);
    cl = std::move(backend);
  }
#else
  no_cl_reason = "no OpenCL platform: OpenCL column skipped (this build has no OpenCL backend)";
#endif

  std::printf("backend_ops_bench: cpu threads %d, repeat %d (median, after %d warm-up)\n",
              flags.threads, flags.repeat, kWarmup);
  if (cl) {
    std::printf("opencl device: %s; launch (Fill 1 float + Synchronize) %.4f ms\n", device.c_str(),
                launch_ms);
    std::puts(
        "ratio = ocl_kernel_ms / cpu_ms (above 1: OpenCL slower); ocl_launch_ms = the op's calls "
        "x launch");
  }
  std::fflush(stdout);

  const auto start = Clock::now();
  std::vector<Row> rows;
  for (const OpCase& c : test_support::AllCases()) {
    if (std::string(OpName(c.op)).find(flags.op) == std::string::npos) continue;
    Row r;
    r.op = OpName(c.op);
    r.shape = c.shape;
    const Timing on_cpu = TimeOn(cpu, cpu, c, flags.repeat, /*time_copies=*/false);
    r.cpu_ms = on_cpu.op_ms;
    if (cl && cl->SupportedOps().Contains(c.uses)) {
      const Timing on_cl = TimeOn(*cl, *cl_timer, c, flags.repeat, /*time_copies=*/true);
      r.has_cl = true;
      r.cl_kernel_ms = on_cl.op_ms;
      r.cl_copy_ms = on_cl.copy_ms;
      r.launches = on_cl.calls;
      r.cl_launch_ms = r.launches * launch_ms;
      std::tie(r.error, r.error_in) = CompareOutputs(on_cl, on_cpu);
    }
    rows.push_back(r);
  }
  PrintTable(rows, cl != nullptr);
  if (!cl) std::puts(no_cl_reason.c_str());
  std::printf("total %.1f s\n", MsSince(start) / 1000.0);

  if (!flags.json.empty() && !WriteJson(flags.json, device, flags.threads, launch_ms, rows)) {
    std::fprintf(stderr, "backend_ops_bench: cannot write %s\n", flags.json.c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace mt::kernels::bench

int main(int argc, char** argv) {
  try {
    return mt::kernels::bench::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "backend_ops_bench: %s\n", e.what());
    return 1;
  }
}
