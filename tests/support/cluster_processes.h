// Real mthub and mtworker processes on 127.0.0.1 for end-to-end tests: a
// hub on a free port (or a given one, to restart it where its workers look),
// workers with a report each, and every one of them writing its --events,
// which tests follow (tests/support/events.h) instead of reading logs.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/subprocess.h"

namespace mt::test_support {

// Where a process started here writes its events: dir/<name>.events, the
// name being the worker's (--name) or the hub log's stem ("hub", "hub2").
inline std::filesystem::path EventsOf(const std::filesystem::path& dir, const std::string& name) {
  return dir / (name + ".events");
}

// Starts mthub on `port` (0: a free one) and returns the port it wrote to
// dir/port, or 0 (with a test failure) if it did not come up. It logs to
// dir/<log_name> and writes its events to EventsOf(dir, stem of log_name).
// `launcher`: a command the hub runs under (e.g. prlimit and its options).
inline int StartHub(std::unique_ptr<ChildProcess>& hub, const std::filesystem::path& dir,
                    std::vector<std::string> args, int port = 0,
                    const std::string& log_name = "hub.log",
                    std::vector<std::string> launcher = {}) {
  const std::filesystem::path port_file = dir / "port";
  std::filesystem::remove(port_file);
  std::vector<std::string> argv = std::move(launcher);
  argv.insert(argv.end(),
              {BinaryPath("hub/mthub"), "--bind", "127.0.0.1", "--port", std::to_string(port),
               "--port-file", port_file.string(), "--events",
               EventsOf(dir, std::filesystem::path(log_name).stem().string()).string()});
  // No dashboard unless the test asks for one: parallel tests would all
  // try mthub's default port.
  if (std::find(args.begin(), args.end(), "--http-port") == args.end())
    argv.insert(argv.end(), {"--http-port", "0"});
  argv.insert(argv.end(), args.begin(), args.end());
  hub = std::make_unique<ChildProcess>(argv, (dir / log_name).string());
  // The port file is the hub's only sign that it listens; poll it, bounded.
  for (int i = 0; i < 600; ++i) {
    std::ifstream in(port_file);
    int bound = 0;
    if (in >> bound && bound > 0) return bound;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ADD_FAILURE() << "hub did not start:\n" << hub->Log();
  return 0;
}

// A worker named `name` reporting to dir/<name>.json, logging to
// dir/<name>.log, its events in EventsOf(dir, name). `binary`: mtworker, or
// the hostile tests/mtworker_faulty.
inline std::unique_ptr<ChildProcess> StartWorker(const std::filesystem::path& dir,
                                                 const std::string& name, int port,
                                                 std::vector<std::string> extra = {},
                                                 const std::string& binary = "worker/mtworker") {
  std::vector<std::string> argv = {BinaryPath(binary),
                                   "--hub",
                                   "127.0.0.1:" + std::to_string(port),
                                   "--name",
                                   name,
                                   "--report",
                                   (dir / (name + ".json")).string(),
                                   "--events",
                                   EventsOf(dir, name).string()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return std::make_unique<ChildProcess>(argv, (dir / (name + ".log")).string());
}

}  // namespace mt::test_support
