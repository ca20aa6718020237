#include "core/cli/command_line.h"

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "core/cli/help_formatter.h"
#include "core/cli/suggestion.h"

namespace mt::cli {
namespace {

// CLI11 takes "--name ''" as a value; the daemons never mean an empty one.
void RefuseEmptyValues(const CLI::App& app) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_expected_max() == 0 || opt->count() == 0) continue;
    for (const std::string& value : opt->results())
      if (value.empty()) throw UsageError(opt->get_name() + ": empty value");
  }
}

}  // namespace

void Configure(CLI::App& app, const std::string& usage) {
  app.formatter(std::make_shared<HelpFormatter>(usage));
  app.option_defaults()->always_capture_default()->multi_option_policy(
      CLI::MultiOptionPolicy::TakeLast);
}

void Section(CLI::App& app, const std::string& name) { app.option_defaults()->group(name); }

std::optional<int> Parse(CLI::App& app, int argc, const char* const* argv,
                         const std::function<void()>& check) {
  try {
    app.parse(argc, argv);
    RefuseEmptyValues(app);
    if (check) check();
    return std::nullopt;
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << app.get_name() << ": " << DescribeParseError(app, e) << " (see " << app.get_name()
              << " --help)" << std::endl;
    return kUsageExitCode;
  }
}

}  // namespace mt::cli
