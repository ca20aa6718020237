// "Did you mean" for command-line mistakes: CLI11 (2.1) names an unknown
// option or command but suggests nothing, so the daemons find the nearest
// known name themselves.
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace mt::cli {

// Edits (insert, delete, replace, swap two neighbours) from `a` to `b`.
size_t EditDistance(const std::string& a, const std::string& b);

// The candidate nearest to `word`, if near enough to be a typo of it: at
// most a third of the word's letters (dashes aside) edited, at least one.
// Ties go to the earlier candidate.
std::optional<std::string> Nearest(const std::string& word,
                                   const std::vector<std::string>& candidates);

// What the user is told for a parse error of `app`: CLI11's message, or for
// an unknown option or command the name and, if there is one, the nearest
// known name ("unknown option --workres; did you mean --workers?").
std::string DescribeParseError(const CLI::App& app, const CLI::ParseError& error);

}  // namespace mt::cli
