// What --version prints: the program, the project's version, the wire
// protocol version it speaks (a hub and its workers must agree on that one)
// and what it was built for (core/util/build_target.h).
#pragma once

#include <string>

namespace mt::cli {

// "mthub 0.1.0 (wire protocol 10; x86_64, avx512)"
std::string VersionText(const std::string& program);

}  // namespace mt::cli
