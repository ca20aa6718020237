// Built-in models, kept as text-format specs so a preset and a --model FILE
// go through the same parser and validation.
#pragma once

#include <string>
#include <vector>

namespace mt {

// The spec text of preset `name`, or nullptr if there is none.
const char* PresetSpecText(const std::string& name);
std::vector<std::string> PresetNames();

}  // namespace mt
