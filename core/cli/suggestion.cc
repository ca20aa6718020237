#include "core/cli/suggestion.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <numeric>

namespace mt::cli {
namespace {

bool LooksLikeOption(const std::string& arg) { return arg.size() > 1 && arg[0] == '-'; }

// "--workres=3" -> "--workres".
std::string OptionName(const std::string& arg) { return arg.substr(0, arg.find('=')); }

void AddOptionNames(const CLI::App& app, std::vector<std::string>& names) {
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& name : opt->get_lnames()) names.push_back("--" + name);
    for (const std::string& name : opt->get_snames()) names.push_back("-" + name);
  }
  for (const CLI::App* sub : app.get_subcommands()) AddOptionNames(*sub, names);  // the parsed ones
}

// The commands --help lists (hidden ones have no group).
std::vector<std::string> CommandNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub :
       app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); }))
    names.push_back(sub->get_name());
  return names;
}

std::string Unknown(const std::string& what, const std::string& word,
                    const std::vector<std::string>& candidates) {
  const std::optional<std::string> near = Nearest(word, candidates);
  return "unknown " + what + " " + word + (near ? "; did you mean " + *near + "?" : "");
}

}  // namespace

size_t EditDistance(const std::string& a, const std::string& b) {
  // Optimal string alignment: rows i-2, i-1 and i of the usual table.
  std::vector<size_t> before(b.size() + 1), previous(b.size() + 1), row(b.size() + 1);
  std::iota(previous.begin(), previous.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({previous[j] + 1, row[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        row[j] = std::min(row[j], before[j - 2] + 1);
    }
    before.swap(previous);
    previous.swap(row);
  }
  return previous[b.size()];
}

std::optional<std::string> Nearest(const std::string& word,
                                   const std::vector<std::string>& candidates) {
  const size_t letters = word.size() - std::min(word.find_first_not_of('-'), word.size());
  if (letters < 2) return std::nullopt;  // "-x" is near every short option
  const size_t max_edits = std::max<size_t>(1, letters / 3);
  std::optional<std::string> best;
  size_t best_edits = max_edits + 1;
  for (const std::string& candidate : candidates) {
    const size_t edits = EditDistance(word, candidate);
    if (edits > 0 && edits < best_edits) {
      best = candidate;
      best_edits = edits;
    }
  }
  return best;
}

std::string DescribeParseError(const CLI::App& app, const CLI::ParseError& error) {
  const bool extras_error = dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr;
  // CLI11 checks for what is required before it looks at what is left over:
  // "eval m --datset D" is a typo before it is a missing --dataset.
  const bool required_error = dynamic_cast<const CLI::RequiredError*>(&error) != nullptr;
  if (!extras_error && !required_error) return error.what();
  const std::vector<std::string> extras = app.remaining(/*recurse=*/true);
  std::vector<std::string> options;
  AddOptionNames(app, options);
  std::string first;  // the first unknown option
  for (const std::string& arg : extras) {
    if (!LooksLikeOption(arg)) continue;
    if (Nearest(OptionName(arg), options)) return Unknown("option", OptionName(arg), options);
    if (first.empty()) first = OptionName(arg);
  }
  if (extras_error && !first.empty()) return Unknown("option", first, options);
  const std::vector<std::string> commands = CommandNames(app);
  if (commands.empty() || !app.get_subcommands().empty()) return error.what();
  for (const std::string& arg : extras)
    if (!LooksLikeOption(arg)) return Unknown("command", arg, commands);
  if (extras_error) return error.what();
  std::string list;
  for (const std::string& name : commands) list += (list.empty() ? "" : ", ") + name;
  return "a command is required: " + list;
}

}  // namespace mt::cli
