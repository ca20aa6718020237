// Where a worker's layers run (--device, mt_worker_config.device): the word
// is parsed to this enum once, at each edge (the command line, the C API),
// and named again from the same table for Join, logs and reports.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mt {

// What each choice does: worker/compute_devices.h.
enum class DeviceChoice { kCpu, kOpenCl, kAuto };

// The words and their choices, in the order --help lists them.
const std::vector<std::pair<std::string, DeviceChoice>>& DeviceChoiceWords();

// "cpu", "opencl" or "auto".
const char* DeviceChoiceName(DeviceChoice choice);

// The choice a word names; nullopt for any other word.
std::optional<DeviceChoice> ParseDeviceChoice(const std::string& word);

// "auto, cpu or opencl", for error messages.
std::string DeviceChoiceList();

}  // namespace mt
