#include "model_io/unique_names.h"

namespace mt {

std::string UniqueNames::Take(const std::string& base) {
  // Every suffix up to last_suffix_[base] is taken (by this base or by a
  // node named so), so the search resumes there: the first free one, as a
  // search from "_2" would find, each taken name passed over once.
  std::string name = base;
  if (taken_.count(name)) {
    ++collisions_;
    int& suffix = last_suffix_[base];
    if (suffix < 1) suffix = 1;
    for (name = base + "_" + std::to_string(++suffix); taken_.count(name);
         name = base + "_" + std::to_string(++suffix))
      ++collisions_;
  }
  taken_.insert(name);
  return name;
}

}  // namespace mt
