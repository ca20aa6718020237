// CLI11 validators with the daemons' wording: each names what it expects and
// what it got, and describes itself for --help in words ("1 to 4096"; a
// ':' there would split it, see CLI::Option::get_type_name).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>

namespace mt::cli {

constexpr int64_t kNoMax = std::numeric_limits<int64_t>::max();

// "1 to 4096", or with no `max` (empty) "0 or more": a range in --help.
std::string PlainRange(const std::string& min, const std::string& max);

// A decimal integer in [min, max]. A transform: it rewrites the value as
// plain decimal, so "010" means ten, as it did before CLI11 (whose own
// conversion would read it as octal). Use with Option::transform.
CLI::Validator Integer(int64_t min, int64_t max = kNoMax);

// The same, or `word` (e.g. "auto"), rewritten as `word_value`, which must
// lie outside [min, max] so the two cannot be confused.
CLI::Validator IntegerOr(const std::string& word, int64_t word_value, int64_t min, int64_t max);

// A finite number in [min, max]. Use with Option::check.
CLI::Validator Real(double min, double max);

// Whatever `parse` accepts: its std::invalid_argument's message is the
// error. For options whose words a library parser defines (--augment,
// --partition), so the command line and the parser cannot disagree.
CLI::Validator ParsedBy(std::function<void(const std::string&)> parse);

// A size such as 256M, 256MB, 256MiB, 1G, 300000K or 1048576 (bytes):
// K, M or G with or without B or iB, any case, are powers of 1024;
// rewritten as a byte count, anything else refused naming the accepted
// forms. Use with Option::transform on an integer option.
CLI::Validator ByteSize();

}  // namespace mt::cli
