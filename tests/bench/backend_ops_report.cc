#include "tests/bench/backend_ops_report.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace mt::kernels::bench {
namespace {

// Keeps the keys in the order they are set, the order readers of the file
// have always seen.
using Json = nlohmann::ordered_json;

std::string Fmt(double v, const char* format = "%.3f") {
  if (std::isnan(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// A measurement to 6 significant digits, the precision it has, so the file
// stays readable (nlohmann writes the shortest text that reads back as the
// same double); null when there is none (NaN: not measured).
Json Number(double v) {
  if (!std::isfinite(v)) return nullptr;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return std::strtod(buf, nullptr);
}

Json OpJson(const Row& r) {
  Json j;
  j["op"] = r.op;
  j["shape"] = r.shape;
  j["cpu_ms"] = Number(r.cpu_ms);
  j["opencl_kernel_ms"] = Number(r.cl_kernel_ms);
  j["opencl_copy_ms"] = Number(r.cl_copy_ms);
  j["ratio"] = Number(r.cl_kernel_ms / r.cpu_ms);
  j["launches"] = r.has_cl ? Json(r.launches) : Json(nullptr);
  j["opencl_launch_ms"] = Number(r.cl_launch_ms);
  j["max_rel_error"] = r.has_cl ? Number(r.error) : Json(nullptr);
  return j;
}

}  // namespace

void PrintTable(const std::vector<Row>& rows, bool with_cl) {
  std::vector<std::vector<std::string>> cells;
  if (with_cl)
    cells.push_back(
        {"op", "shape", "cpu_ms", "ocl_kernel_ms", "ocl_copy_ms", "ocl_launch_ms", "ratio", ""});
  else
    cells.push_back({"op", "shape", "cpu_ms"});
  for (const Row& r : rows) {
    if (!with_cl) {
      cells.push_back({r.op, r.shape, Fmt(r.cpu_ms)});
      continue;
    }
    std::string note;
    if (r.error > kMaxRelativeError)
      note = "WARNING: " + r.error_in + " differs from cpu, max rel error " + Fmt(r.error, "%.2g");
    cells.push_back({r.op, r.shape, Fmt(r.cpu_ms), Fmt(r.cl_kernel_ms), Fmt(r.cl_copy_ms),
                     std::to_string(r.launches) + "x = " + Fmt(r.cl_launch_ms),
                     Fmt(r.cl_kernel_ms / r.cpu_ms, "%.2f"), note});
  }
  std::vector<size_t> width(cells[0].size(), 0);
  for (const auto& line : cells)
    for (size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], line[i].size());
  for (const auto& line : cells) {
    std::string out;
    for (size_t i = 0; i < line.size(); ++i) {
      const bool left = i < 2 || i == 7;  // names and the note; numbers right-aligned
      const std::string pad(width[i] - line[i].size(), ' ');
      out += (i ? "  " : "") + (left ? line[i] + pad : pad + line[i]);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    std::puts(out.c_str());
  }
}

bool WriteJson(const std::string& path, const std::string& device, int threads, double launch_ms,
               const std::vector<Row>& rows) {
  Json j;
  j["opencl_device"] = device.empty() ? Json(nullptr) : Json(device);
  j["threads"] = threads;
  j["launch_ms"] = Number(launch_ms);
  j["ops"] = Json::array();
  for (const Row& r : rows) j["ops"].push_back(OpJson(r));
  std::ofstream out(path);
  // The device name comes from the driver: replace any invalid UTF-8 rather than throw.
  out << j.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
  out.close();
  return static_cast<bool>(out);
}

}  // namespace mt::kernels::bench
