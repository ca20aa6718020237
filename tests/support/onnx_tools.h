// ONNX files judged by tools outside mt, for end-to-end tests: onnx's own
// checker (tests/onnx/check_model.py, run by /usr/bin/python3) and ONNX
// Runtime's WASM build in node (tests/onnx/ort_run.mjs). An export that only
// mt can read back proves little; these are what a user's deployment runs.
// Tests skip only where the tools are missing (OnnxToolsMissing).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "tests/support/subprocess.h"

namespace mt::test_support {

inline std::string OnnxTestDir() { return std::string(MT_SOURCE_DIR) + "/tests/onnx"; }

// `program` as execv needs it: the first executable of that name on PATH,
// or "" when there is none.
inline std::string FindOnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// Why the ONNX tools cannot run on this machine, or "" when they can. The
// reasons say how to get them, so a skip is never a mystery.
inline std::string OnnxToolsMissing() {
  if (FindOnPath("node").empty()) return "node is not on PATH (deploy/install-deps.sh installs it)";
  for (const char* package : {"onnxruntime-web", "pngjs", "jpeg-js"})
    if (!std::filesystem::exists(OnnxTestDir() + "/node_modules/" + package))
      return std::string("tests/onnx/node_modules/") + package +
             " is missing (npm ci --prefix tests/onnx)";
  if (access("/usr/bin/python3", X_OK) != 0) return "/usr/bin/python3 is missing";
  const ProcessResult r = RunProcess({"/usr/bin/python3", "-c", "import onnx.checker"}, 60);
  if (r.exit_code != 0)
    return "/usr/bin/python3 cannot import onnx (apt install python3-onnx): " + r.output;
  return "";
}

inline void WriteF32(const std::filesystem::path& p, const std::vector<float>& v) {
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(v.data()),
            static_cast<std::streamsize>(v.size() * sizeof(float)));
}

inline std::vector<float> ReadF32(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<float> v(bytes.size() / sizeof(float));
  std::copy(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(v.size() * sizeof(float)),
            reinterpret_cast<char*>(v.data()));
  return v;
}

// onnx.checker.check_model(full_check=True) and strict shape inference.
inline ProcessResult CheckOnnxModel(const std::filesystem::path& model) {
  return RunProcess({"/usr/bin/python3", OnnxTestDir() + "/check_model.py", model.string()}, 120);
}

// ONNX Runtime's output for `input` of shape `nchw`, written through
// `work`/ort.{in,out}.f32. Empty, with a test failure, when the run fails.
inline std::vector<float> OrtLogits(const std::filesystem::path& model,
                                    const std::vector<float>& input, const std::vector<int>& nchw,
                                    const std::filesystem::path& work) {
  const std::filesystem::path in = work / "ort.in.f32", out = work / "ort.out.f32";
  WriteF32(in, input);
  std::filesystem::remove(out);
  std::string shape;
  for (int d : nchw) shape += (shape.empty() ? "" : ",") + std::to_string(d);
  const ProcessResult r = RunProcess({FindOnPath("node"), OnnxTestDir() + "/ort_run.mjs",
                                      model.string(), in.string(), out.string(), "--shape", shape},
                                     180);
  if (r.exit_code != 0) {
    ADD_FAILURE() << "ONNX Runtime could not run " << model << " (exit " << r.exit_code << "):\n"
                  << r.output;
    return {};
  }
  return ReadF32(out);
}

// A reproducible batch of inputs in about the range normalised images take.
inline std::vector<float> FixedInput(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.5f, 1.5f);
  std::vector<float> v(count);
  for (float& x : v) x = u(rng);
  return v;
}

// Largest |a[i] - b[i]|; infinity when the sizes differ, so that a short
// output can never pass as close.
inline double MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size() || a.empty()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
  return worst;
}

// mt's own logits for `n` samples of `input`, evaluation mode (batch norm
// on its running statistics, as ONNX Runtime runs the exported graph).
inline std::vector<float> MtLogits(Model& model, const std::vector<float>& input, int n) {
  model.Reserve(n);
  const std::vector<int32_t> labels(static_cast<size_t>(n), 0);
  model.SetBatch(input.data(), labels.data(), n);
  model.Evaluate(nullptr);
  std::vector<float> logits(static_cast<size_t>(n) * static_cast<size_t>(model.num_classes()));
  model.GetLogits(logits.data());
  return logits;
}

}  // namespace mt::test_support
