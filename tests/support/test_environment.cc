// What every test process, and every mthub and mtworker it starts, runs
// with, set before main() so no test has to remember it:
// - MT_STATE_DIR: hubs keep their TLS certificate, workers the hubs they
//   have met, in the build tree rather than the user's ~/.mt. Every test hub
//   shares one certificate, so a port reused by the next test's hub is no
//   changed certificate to a worker that trusts on first use.
// - MT_ALLOW_DATA: workers may open the datasets tests write to the
//   temporary directory (a worker otherwise opens only the known dataset
//   names a hub gives it).
// - MT_CACHE_DIR: image folders are decoded into the build tree's cache,
//   not the user's ~/.cache/mt.
// A value already in the environment wins.
#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

const bool kEnvironmentSet = [] {
  setenv("MT_STATE_DIR", MT_BINARY_DIR "/test-state", 0);
  setenv("MT_CACHE_DIR", MT_BINARY_DIR "/test-state/image-cache", 0);
  std::error_code ec;
  const std::string tmp = std::filesystem::temp_directory_path(ec).string();
  setenv("MT_ALLOW_DATA", ((ec ? std::string("/tmp") : tmp) + ":" MT_BINARY_DIR).c_str(), 0);
  return true;
}();

}  // namespace
