#include "core/cli/help_formatter.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <sstream>
#include <vector>

namespace mt::cli {
namespace {

constexpr size_t kNameColumn = 28;
constexpr size_t kWidth = 80;  // a terminal's default

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, sep)) parts.push_back(part);
  return parts;
}

// The option's type name, then each validator's description, joined by
// ':' (CLI::Option::get_type_name); the first part is the value's word.
struct TypeParts {
  std::string word;
  std::vector<std::string> constraints;
};

TypeParts SplitTypeName(const CLI::Option* opt) {
  TypeParts parts;
  std::vector<std::string> all = Split(opt->get_type_name(), ':');
  if (all.empty()) return parts;
  parts.word = all[0];
  if (parts.word == "INT" || parts.word == "UINT")
    parts.word = "N";
  else if (parts.word == "FLOAT")
    parts.word = "X";
  else if (parts.word == "TEXT")
    parts.word = "VALUE";
  for (size_t i = 1; i < all.size(); ++i) {
    const std::string& c = all[i];
    // CLI::IsMember describes itself as {a,b,c}: shown as the value's word.
    if (c.size() >= 2 && c.front() == '{' && c.back() == '}') {
      parts.word.clear();
      for (const std::string& choice : Split(c.substr(1, c.size() - 2), ','))
        parts.word += (parts.word.empty() ? "" : "|") + choice;
    } else if (!c.empty()) {
      parts.constraints.push_back(c);
    }
  }
  return parts;
}

// "[1 to 256; default 1]": the validators' descriptions and the default, or
// "" when there are none.
std::string Notes(const CLI::Option* opt) {
  std::vector<std::string> notes = SplitTypeName(opt).constraints;
  const std::string& def = opt->get_default_str();
  if (opt->get_expected_max() != 0 && !def.empty() && def != "[]")
    notes.push_back("default " + def);
  if (notes.empty()) return "";
  std::string out = "[";
  for (size_t i = 0; i < notes.size(); ++i) out += (i ? "; " : "") + notes[i];
  return out + "]";
}

// Stands for a space that Wrap must not break at.
constexpr char kGlue = '\x1f';

// A synopsis's "[--batch B]" wraps as one word.
void GlueBrackets(std::string& line) {
  int depth = 0;
  for (char& c : line) {
    depth += c == '[' ? 1 : c == ']' ? -1 : 0;
    if (c == ' ' && depth > 0) c = kGlue;
  }
}

// Each line of `text` wrapped at word boundaries; the first line starts at
// column `first`, continuation lines at column `indent`.
std::string Wrap(const std::string& text, size_t indent, size_t width, size_t first) {
  std::string out;
  size_t column = first;
  for (const std::string& paragraph : Split(text, '\n')) {
    if (!out.empty()) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
    }
    std::stringstream words(paragraph);
    std::string word, line;
    while (words >> word) {
      if (!line.empty() && column + line.size() + 1 + word.size() > width) {
        out += line + "\n" + std::string(indent, ' ');
        line.clear();
        column = indent;
      }
      line += (line.empty() ? "" : " ") + word;
    }
    out += line;
  }
  return out;
}

std::string Wrap(const std::string& text, size_t indent, size_t width) {
  return Wrap(text, indent, width, indent);
}

}  // namespace

HelpFormatter::HelpFormatter(std::string usage) : usage_(std::move(usage)) {
  column_width(kNameColumn);
}

std::string HelpFormatter::make_help(const CLI::App* app, std::string /*name*/,
                                     CLI::AppFormatMode /*mode*/) const {
  // Each synopsis line wrapped on its own, its continuation under the word
  // after the program's name ("usage: mthub " is 13 columns).
  std::string out;
  for (std::string line : Split(usage_, '\n')) {
    GlueBrackets(line);
    const size_t program = std::min(line.find_first_not_of(' '), line.size());
    const size_t flags = line.find(' ', program);
    const std::string leading = out.empty() ? "usage: " : std::string(program, ' ');
    const size_t indent =
        (out.empty() ? leading.size() : 0) + (flags == std::string::npos ? 0 : flags + 1);
    std::string wrapped = Wrap(line, indent, kWidth, leading.size());
    std::replace(wrapped.begin(), wrapped.end(), kGlue, ' ');
    out += leading + wrapped + "\n";
  }
  out += "\n" + Wrap(app->get_description(), 0, kWidth) + "\n";
  for (const std::string& group : app->get_groups()) {
    const std::vector<const CLI::Option*> opts = app->get_options(
        [&](const CLI::Option* opt) { return opt->get_group() == group && opt->nonpositional(); });
    if (!group.empty() && !opts.empty()) out += make_group(group, false, opts);
  }
  if (!app->get_footer().empty()) out += "\n" + Wrap(app->get_footer(), 0, kWidth) + "\n";
  return out;
}

// Long names first ("--help, -h"): every entry starts with its --name,
// which is what deploy/systemd/verify.sh reads the known flags from.
std::string HelpFormatter::make_option_name(const CLI::Option* opt, bool is_positional) const {
  if (is_positional) return CLI::Formatter::make_option_name(opt, is_positional);
  std::string names;
  for (const std::string& name : opt->get_lnames()) names += (names.empty() ? "--" : ", --") + name;
  for (const std::string& name : opt->get_snames()) names += (names.empty() ? "-" : ", -") + name;
  return names;
}

std::string HelpFormatter::make_option_opts(const CLI::Option* opt) const {
  if (!opt->get_option_text().empty()) return " " + opt->get_option_text();
  if (opt->get_expected_max() == 0) return "";  // a flag
  const std::string word = SplitTypeName(opt).word;
  if (word.empty()) return "";
  return " " + word + (opt->get_expected_max() > 1 ? "[,...]" : "");
}

std::string HelpFormatter::make_option_desc(const CLI::Option* opt) const {
  const std::string notes = Notes(opt);
  return opt->get_description() + (notes.empty() ? "" : " " + notes);
}

std::string HelpFormatter::make_option(const CLI::Option* opt, bool is_positional) const {
  const std::string name = "  " + make_option_name(opt, is_positional) + make_option_opts(opt);
  std::string out = name;
  if (name.size() + 1 >= kNameColumn)
    out += "\n" + std::string(kNameColumn, ' ');
  else
    out += std::string(kNameColumn - name.size(), ' ');
  // The notes wrap as one word, so "[1 to 256; default 1]" stays on one line.
  std::string notes = Notes(opt);
  std::replace(notes.begin(), notes.end(), ' ', kGlue);
  std::string text =
      Wrap(opt->get_description() + (notes.empty() ? "" : " " + notes), kNameColumn, kWidth);
  std::replace(text.begin(), text.end(), kGlue, ' ');
  return out + text + "\n";
}

}  // namespace mt::cli
