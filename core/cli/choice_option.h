// An option that takes one of a few words and stores the matching enum, so
// a choice is parsed once, here at the command-line edge, and the code
// behind it switches on the enum rather than comparing strings.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <utility>
#include <vector>

namespace mt::cli {

template <class E>
using ChoiceNames = std::vector<std::pair<std::string, E>>;

// --help shows the words as the value ("fixed|balanced") and the word of
// `target`'s value as the default.
template <class E>
CLI::Option* AddChoice(CLI::App& app, const std::string& flag, E& target, ChoiceNames<E> names,
                       const std::string& help) {
  std::vector<std::string> words;
  std::string default_word;
  for (const auto& [word, value] : names) {
    words.push_back(word);
    if (value == target) default_word = word;
  }
  return app
      .add_option_function<std::string>(
          flag,
          [&target, names](const std::string& given) {
            for (const auto& [word, value] : names)
              if (word == given) target = value;
          },
          help)
      ->check(CLI::IsMember(words))
      ->default_str(default_word);
}

}  // namespace mt::cli
