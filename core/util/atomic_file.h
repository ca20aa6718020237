#pragma once

#include <string>

namespace mt {

// Writes to a temporary file beside `path`, fsyncs it, renames it over
// `path` and fsyncs the directory: a reader sees the old file or the whole
// new one, never half of it, even across a crash. Throws std::runtime_error
// naming the path.
// `mode`: the new file's permissions (0600 for a private key).
void WriteFileAtomically(const std::string& path, const std::string& bytes, int mode = 0644);
// Creates `dir` if needed and proves it writable, so a run fails at start,
// not an epoch later, when its checkpoints cannot be kept. `what` names the
// setting in the error ("--checkpoint-dir").
void EnsureWritableDirectory(const std::string& dir, const std::string& what);
// Throws std::runtime_error naming the path.
std::string ReadFile(const std::string& path);

}  // namespace mt
