#pragma once

#include <string>

namespace mt {

// Writes to a temporary file beside `path`, fsyncs it, renames it over
// `path` and fsyncs the directory: a reader sees the old file or the whole
// new one, never half of it, even across a crash. Throws std::runtime_error
// naming the path.
void WriteFileAtomically(const std::string& path, const std::string& bytes);
// Throws std::runtime_error naming the path.
std::string ReadFile(const std::string& path);

}  // namespace mt
