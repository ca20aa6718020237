// --help in the daemons' style: the usage, the description, then per section
// one entry per option: its value as a word (N, X, DIR, fixed|balanced), what
// it does, and in brackets its range in words and its default; wrapped to 80
// columns.
// Every entry starts with the option's --name (deploy/systemd/verify.sh
// reads the known flags from --help that way).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace mt::cli {

class HelpFormatter : public CLI::Formatter {
 public:
  // `usage`: the synopsis lines after "usage: ".
  explicit HelpFormatter(std::string usage);

  std::string make_help(const CLI::App* app, std::string name,
                        CLI::AppFormatMode mode) const override;
  std::string make_option_name(const CLI::Option* opt, bool is_positional) const override;
  std::string make_option_opts(const CLI::Option* opt) const override;
  std::string make_option_desc(const CLI::Option* opt) const override;
  std::string make_option(const CLI::Option* opt, bool is_positional) const override;

 private:
  std::string usage_;
};

}  // namespace mt::cli
