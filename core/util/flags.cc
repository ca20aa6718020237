#include "core/util/flags.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace mt {
namespace {

std::string Bad(const std::string& name, const std::string& want, const std::string& got) {
  return "--" + name + ": expected " + want + ", got '" + got + "'";
}

}  // namespace

FlagSet::FlagSet(std::string program, std::string synopsis)
    : program_(std::move(program)), synopsis_(std::move(synopsis)) {}

void FlagSet::AddString(const std::string& name, std::string* target, const std::string& help,
                        std::vector<std::string> choices) {
  Flag f{name, help, target->empty() ? "" : *target, "VALUE"};
  if (!choices.empty()) {
    f.value_hint.clear();
    for (const auto& c : choices) f.value_hint += (f.value_hint.empty() ? "" : "|") + c;
  }
  f.assign = [name, target, choices](const std::string& v) {
    if (!choices.empty()) {
      bool ok = false;
      for (const auto& c : choices) ok = ok || c == v;
      std::string list;
      for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
      if (!ok) throw FlagError(Bad(name, "one of " + list, v));
    }
    if (v.empty()) throw FlagError("--" + name + ": empty value");
    *target = v;
  };
  flags_.push_back(std::move(f));
}

void FlagSet::AddInt(const std::string& name, int64_t* target, const std::string& help, int64_t min,
                     int64_t max) {
  Flag f{name, help, std::to_string(*target), "N"};
  f.assign = [name, target, min, max](const std::string& v) {
    errno = 0;
    char* end = nullptr;
    const long long x = std::strtoll(v.c_str(), &end, 10);
    std::string range = "an integer";
    if (min != INT64_MIN && max != INT64_MAX)
      range += " in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
    else if (min != INT64_MIN)
      range += " >= " + std::to_string(min);
    if (v.empty() || *end != '\0' || errno == ERANGE || x < min || x > max)
      throw FlagError(Bad(name, range, v));
    *target = x;
  };
  flags_.push_back(std::move(f));
}

void FlagSet::AddDouble(const std::string& name, double* target, const std::string& help, double min,
                        double max) {
  std::ostringstream d;
  d << *target;
  Flag f{name, help, d.str(), "X"};
  f.assign = [name, target, min, max](const std::string& v) {
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    std::ostringstream range;
    range << "a number in [" << min << ", " << max << "]";
    if (v.empty() || *end != '\0' || !std::isfinite(x) || x < min || x > max)
      throw FlagError(Bad(name, range.str(), v));
    *target = x;
  };
  flags_.push_back(std::move(f));
}

void FlagSet::AddBool(const std::string& name, bool* target, const std::string& help) {
  Flag f{name, help, "", ""};
  f.is_bool = true;
  f.assign = [name, target](const std::string& v) {
    if (v == "" || v == "true" || v == "1") *target = true;
    else if (v == "false" || v == "0") *target = false;
    else throw FlagError(Bad(name, "true or false", v));
  };
  flags_.push_back(std::move(f));
}

FlagSet::Flag* FlagSet::Find(const std::string& name) {
  for (auto& f : flags_)
    if (f.name == name) return &f;
  return nullptr;
}

bool FlagSet::Parse(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") return false;
    if (arg.rfind("--", 0) != 0) throw FlagError("unexpected argument '" + arg + "' (flags start with --; see --help)");
    std::string name = arg.substr(2), value;
    bool has_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    Flag* f = Find(name);
    if (!f) throw FlagError("unknown flag --" + name + " (see --help)");
    if (!has_value && !f->is_bool) {
      if (i + 1 >= argc) throw FlagError("--" + name + ": missing value");
      value = argv[++i];
    }
    f->assign(value);
    f->set = true;
  }
  return true;
}

bool FlagSet::WasSet(const std::string& name) const {
  for (const auto& f : flags_)
    if (f.name == name) return f.set;
  return false;
}

std::string FlagSet::Help() const {
  std::ostringstream out;
  out << "usage: " << program_ << " " << synopsis_ << "\n\nflags:\n";
  for (const auto& f : flags_) {
    std::string head = "  --" + f.name + (f.value_hint.empty() ? "" : " " + f.value_hint);
    out << head;
    if (head.size() < 30) out << std::string(30 - head.size(), ' ');
    else out << "\n" << std::string(30, ' ');
    out << f.help;
    if (!f.default_text.empty() && !f.is_bool) out << " (default " << f.default_text << ")";
    out << "\n";
  }
  out << "  --help                      this text\n";
  return out.str();
}

}  // namespace mt
