// What --version prints: the program, the project's version and the wire
// protocol version it speaks (a hub and its workers must agree on that one).
#pragma once

#include <string>

namespace mt::cli {

// "mthub 0.1.0 (wire protocol 2)"
std::string VersionText(const std::string& program);

}  // namespace mt::cli
