// Headless Chromium for end-to-end tests of web pages the daemons serve:
// load a page, let its scripts run, and read the DOM they left (or take a
// screenshot). Debian's chromium, installed by deploy/install-deps.sh; tests
// skip where it is missing.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/subprocess.h"

namespace mt::test_support {

constexpr const char* kChromium = "/usr/bin/chromium";

inline bool HaveChromium() { return std::filesystem::exists(kChromium); }

// A throwaway profile in `profile_dir`; --no-sandbox because tests may run
// as root, where Chromium's sandbox refuses to start; the daemons' pages
// come over HTTPS with their own self-signed certificates.
inline std::vector<std::string> HeadlessChromium(const std::filesystem::path& profile_dir) {
  return {kChromium,
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-dev-shm-usage",
          "--no-first-run",
          "--disable-extensions",
          "--hide-scrollbars",
          "--ignore-certificate-errors",
          "--user-data-dir=" + profile_dir.string()};
}

// The DOM of `url` once its scripts have had `budget_ms` of virtual time
// (timers run fast; network waits are real), or "" when Chromium failed.
// Chromium's own log lines are left out.
inline std::string DumpDom(const std::string& url, const std::filesystem::path& profile_dir,
                           int budget_ms, double timeout_s = 60) {
  std::vector<std::string> argv = HeadlessChromium(profile_dir);
  argv.push_back("--virtual-time-budget=" + std::to_string(budget_ms));
  argv.push_back("--dump-dom");
  argv.push_back(url);
  const ProcessResult r = RunProcess(argv, timeout_s);
  const size_t begin = r.output.find("<html"), end = r.output.rfind("</html>");
  if (r.exit_code != 0 || begin == std::string::npos || end == std::string::npos) return "";
  return r.output.substr(begin, end + 7 - begin);
}

}  // namespace mt::test_support
