// Checks on what a program prints for a person: --help wraps its lines, so
// a phrase is looked for with the line breaks gone.
#pragma once

#include <sstream>
#include <string>

namespace mt::test_support {

// `text` with every run of white space (line breaks included) as one space.
inline std::string OneLine(const std::string& text) {
  std::istringstream in(text);
  std::string word, out;
  while (in >> word) out += (out.empty() ? "" : " ") + word;
  return out;
}

// The lines of `text` longer than `columns`, one a line ("" when none).
inline std::string LinesWiderThan(const std::string& text, size_t columns) {
  std::istringstream in(text);
  std::string line, wide;
  while (std::getline(in, line))
    if (line.size() > columns) wide += line + "\n";
  return wide;
}

}  // namespace mt::test_support
