#include "core/cli/version.h"

#include "core/util/build_target.h"
#include "proto/protocol_version.h"

#ifndef MT_VERSION
#error "MT_VERSION comes from CMake's PROJECT_VERSION (core/CMakeLists.txt)"
#endif

namespace mt::cli {

std::string VersionText(const std::string& program) {
  return program + " " + MT_VERSION + " (wire protocol " + std::to_string(wire::kProtocolVersion) +
         "; " + kBuildArch + ", " + kBuildSimd + ")";
}

}  // namespace mt::cli
