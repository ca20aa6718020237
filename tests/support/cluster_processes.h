// Real mthub and mtworker processes on 127.0.0.1 for end-to-end tests: a
// hub on a free port (or a given one, to restart it where its workers look),
// workers with a report each, and bounded waits on what they log.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/subprocess.h"

namespace mt::test_support {

// Starts mthub on `port` (0: a free one) and returns the port it wrote to
// dir/port, or 0 (with a test failure) if it did not come up.
inline int StartHub(std::unique_ptr<ChildProcess>& hub, const std::filesystem::path& dir,
                    std::vector<std::string> args, int port = 0, const std::string& log_name = "hub.log") {
  const std::filesystem::path port_file = dir / "port";
  std::filesystem::remove(port_file);
  std::vector<std::string> argv = {BinaryPath("hub/mthub"), "--bind", "127.0.0.1", "--port", std::to_string(port),
                                   "--port-file", port_file.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  hub = std::make_unique<ChildProcess>(argv, (dir / log_name).string());
  for (int i = 0; i < 600; ++i) {
    std::ifstream in(port_file);
    int bound = 0;
    if (in >> bound && bound > 0) return bound;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ADD_FAILURE() << "hub did not start:\n" << hub->Log();
  return 0;
}

// A worker named `name` reporting to dir/<name>.json, logging to dir/<name>.log.
inline std::unique_ptr<ChildProcess> StartWorker(const std::filesystem::path& dir, const std::string& name, int port,
                                                 std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {BinaryPath("worker/mtworker"), "--hub", "127.0.0.1:" + std::to_string(port),
                                   "--name", name, "--report", (dir / (name + ".json")).string()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return std::make_unique<ChildProcess>(argv, (dir / (name + ".log")).string());
}

// Waits until the process has logged `text` at least `times` times; false
// after timeout_s.
inline bool WaitForLog(const ChildProcess& p, const std::string& text, double timeout_s, int times = 1) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string log = p.Log();
    int seen = 0;
    for (size_t at = log.find(text); at != std::string::npos; at = log.find(text, at + 1)) ++seen;
    if (seen >= times) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace mt::test_support
