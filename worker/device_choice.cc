#include "worker/device_choice.h"

namespace mt {

const std::vector<std::pair<std::string, DeviceChoice>>& DeviceChoiceWords() {
  static const std::vector<std::pair<std::string, DeviceChoice>> words{
      {"auto", DeviceChoice::kAuto},
      {"cpu", DeviceChoice::kCpu},
      {"opencl", DeviceChoice::kOpenCl}};
  return words;
}

const char* DeviceChoiceName(DeviceChoice choice) {
  for (const auto& [word, value] : DeviceChoiceWords())
    if (value == choice) return word.c_str();
  return "cpu";  // unreachable: every choice has a word
}

std::optional<DeviceChoice> ParseDeviceChoice(const std::string& word) {
  for (const auto& [name, value] : DeviceChoiceWords())
    if (name == word) return value;
  return std::nullopt;
}

std::string DeviceChoiceList() {
  const auto& words = DeviceChoiceWords();
  std::string list;
  for (size_t i = 0; i < words.size(); ++i)
    list += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + words[i].first;
  return list;
}

}  // namespace mt
