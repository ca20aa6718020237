// The daemons' command lines on CLI11, with one set of conventions: --help
// and --version print to stdout and exit 0; every mistake, whether CLI11
// finds it or a check between options does, is one line on stderr and exit 2.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
#include <string>

namespace mt::cli {

constexpr int kUsageExitCode = 2;

// A command-line mistake found after CLI11 has parsed (options that cannot
// go together, a file named by an option that cannot be read).
class UsageError : public CLI::ParseError {
 public:
  explicit UsageError(const std::string& message)
      : CLI::ParseError("UsageError", message, kUsageExitCode) {}
};

// Sets up `app` for a daemon: the help layout (usage: `usage`), a repeated
// option takes its last value, defaults are shown in --help.
void Configure(CLI::App& app, const std::string& usage);

// Options added from now on go in the --help section `name`.
void Section(CLI::App& app, const std::string& name);

// Parses argv, refuses empty values ("--report ''"), then runs `check`,
// which throws UsageError for relations between options. Returns
// std::nullopt when the program goes on, else the exit code to return now.
std::optional<int> Parse(CLI::App& app, int argc, const char* const* argv,
                         const std::function<void()>& check);

}  // namespace mt::cli
