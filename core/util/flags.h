// Command-line flags for the daemons: --name value or --name=value, typed
// targets with ranges, and a --help text built from the same table, so the
// help can never disagree with what is parsed.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace mt {

struct FlagError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class FlagSet {
 public:
  FlagSet(std::string program, std::string synopsis);

  void AddString(const std::string& name, std::string* target, const std::string& help,
                 std::vector<std::string> choices = {});
  void AddInt(const std::string& name, int64_t* target, const std::string& help,
              int64_t min = INT64_MIN, int64_t max = INT64_MAX);
  void AddDouble(const std::string& name, double* target, const std::string& help,
                 double min = -1e300, double max = 1e300);
  void AddBool(const std::string& name, bool* target, const std::string& help);

  // Returns false when --help was asked for (the caller prints Help() and
  // exits 0). Throws FlagError naming the flag on any bad input.
  bool Parse(int argc, const char* const* argv);
  bool WasSet(const std::string& name) const;
  std::string Help() const;

 private:
  struct Flag {
    Flag(std::string name_, std::string help_, std::string default_text_, std::string value_hint_)
        : name(std::move(name_)), help(std::move(help_)), default_text(std::move(default_text_)),
          value_hint(std::move(value_hint_)) {}
    std::string name, help, default_text, value_hint;
    bool is_bool = false;
    bool set = false;
    std::function<void(const std::string&)> assign;
  };
  Flag* Find(const std::string& name);

  std::string program_, synopsis_;
  std::vector<Flag> flags_;
};

}  // namespace mt
