#include "core/util/event_file.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace mt {

EventFile::EventFile(const std::string& path) : opened_(std::chrono::steady_clock::now()) {
  file_ = std::fopen(path.c_str(), "w");
  if (!file_)
    throw std::runtime_error("cannot write events to " + path + ": " + std::strerror(errno));
}

EventFile::~EventFile() {
  if (file_) std::fclose(file_);
}

void EventFile::Write(const std::string& name, nlohmann::ordered_json fields) {
  nlohmann::ordered_json line;
  line["t"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - opened_).count();
  line["event"] = name;
  for (auto& [key, value] : fields.items()) line[key] = std::move(value);
  const std::string text = line.dump() + "\n";
  std::lock_guard<std::mutex> lock(mu_);
  std::fwrite(text.data(), 1, text.size(), file_);
  std::fflush(file_);
}

}  // namespace mt
