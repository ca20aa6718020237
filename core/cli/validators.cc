#include "core/cli/validators.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>

namespace mt::cli {
namespace {

std::string Got(const std::string& text) { return ", got '" + text + "'"; }

std::string NumberText(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

}  // namespace

std::string PlainRange(const std::string& min, const std::string& max) {
  return max.empty() ? min + " or more" : min + " to " + max;
}

CLI::Validator Integer(int64_t min, int64_t max) {
  const std::string want =
      "expected an integer " + (max == kNoMax
                                    ? ">= " + std::to_string(min)
                                    : "in " + std::to_string(min) + ".." + std::to_string(max));
  return CLI::Validator(
      [min, max, want](std::string& text) -> std::string {
        errno = 0;
        char* end = nullptr;
        const long long x = std::strtoll(text.c_str(), &end, 10);
        if (text.empty() || *end != '\0' || errno == ERANGE || x < min || x > max)
          return want + Got(text);
        text = std::to_string(x);
        return {};
      },
      PlainRange(std::to_string(min), max == kNoMax ? "" : std::to_string(max)), "Integer");
}

CLI::Validator IntegerOr(const std::string& word, int64_t word_value, int64_t min, int64_t max) {
  CLI::Validator integer = Integer(min, max);
  const std::string range = word + " or " + PlainRange(std::to_string(min), std::to_string(max));
  const std::string want =
      "expected " + word + " or an integer in " + std::to_string(min) + ".." + std::to_string(max);
  return CLI::Validator(
      [integer, word, word_value, want](std::string& text) -> std::string {
        if (text == word) {
          text = std::to_string(word_value);
          return {};
        }
        std::string copy = text;
        if (!integer(copy).empty()) return want + Got(text);
        text = copy;
        return {};
      },
      range, "IntegerOr");
}

CLI::Validator ParsedBy(std::function<void(const std::string&)> parse) {
  return CLI::Validator(
      [parse](std::string& text) -> std::string {
        try {
          parse(text);
          return {};
        } catch (const std::invalid_argument& e) {
          return e.what();
        }
      },
      "", "ParsedBy");
}

CLI::Validator Real(double min, double max) {
  const std::string want = "expected a number in " + NumberText(min) + ".." + NumberText(max);
  return CLI::Validator(
      [min, max, want](std::string& text) -> std::string {
        char* end = nullptr;
        const double x = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !std::isfinite(x) || x < min || x > max)
          return want + Got(text);
        return {};
      },
      PlainRange(NumberText(min), NumberText(max)), "Real");
}

CLI::Validator ByteSize() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        // K, M or G, with or without B or iB, any case, after an optional
        // space: 256M, 256MB, 256MiB and 256 mb are all 256 x 1024^2 (a
        // memory size, as free(1) and the JVM count them).
        std::string suffix = end ? std::string(end) : "";
        if (!suffix.empty() && suffix[0] == ' ') suffix.erase(0, 1);
        for (char& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        if (suffix.size() == 3 && suffix.compare(1, 2, "IB") == 0) suffix.erase(1);
        if (suffix.size() == 2 && suffix[1] == 'B') suffix.erase(1);
        double unit = -1;
        if (suffix.empty() || suffix == "B")
          unit = 1;
        else if (suffix == "K")
          unit = 1024.0;
        else if (suffix == "M")
          unit = 1024.0 * 1024;
        else if (suffix == "G")
          unit = 1024.0 * 1024 * 1024;
        if (end == text.c_str() || unit < 0 || !(v > 0) || v * unit > 1e15 || v * unit < 1)
          return "expected a size such as 256M, 256MB, 256MiB or 1G (K, M or G, with or without "
                 "B or iB: powers of 1024)" +
                 Got(text);
        text = std::to_string(static_cast<int64_t>(v * unit));
        return {};
      },
      "", "ByteSize");
}

}  // namespace mt::cli
