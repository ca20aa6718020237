// What this binary was compiled for: the CPU architecture and the vector
// instructions of its CPU kernels. Reports and --version carry both, since
// a mixed group of devices (x86 hub, arm64 phones) runs several builds.
#pragma once

#include "kernels/cpu/simd.h"

namespace mt {

#if defined(__x86_64__)
inline constexpr const char* kBuildArch = "x86_64";
#elif defined(__aarch64__)
inline constexpr const char* kBuildArch = "aarch64";
#elif defined(__arm__)
inline constexpr const char* kBuildArch = "arm";
#elif defined(__i386__)
inline constexpr const char* kBuildArch = "i386";
#else
inline constexpr const char* kBuildArch = "unknown";
#endif

inline constexpr const char* kBuildSimd = kernels::simd::kIsa;

}  // namespace mt
