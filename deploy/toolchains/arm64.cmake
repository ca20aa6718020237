# Cross-compiles mt for 64-bit ARM Linux (phones' CPUs) on a Debian x86-64
# host with Debian's multiarch arm64 packages (deploy/cross-build.sh installs
# them). Code is built for a phone-class baseline, ARMv8.2-A, never for the
# build machine (cross-build.sh passes -DMT_NATIVE=OFF).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Multiarch: arm64 libraries and CMake packages live in
# /usr/lib/aarch64-linux-gnu beside the host's, so no sysroot is needed;
# headers are shared in /usr/include.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_C_FLAGS_INIT "-march=armv8.2-a")
set(CMAKE_CXX_FLAGS_INIT "-march=armv8.2-a")

# Programs that run during the build are the host's: protoc and
# grpc_cpp_plugin (protobuf-compiler, protobuf-compiler-grpc).
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)

# pkg-config (cpp-httplib) must read the arm64 .pc files, not the host's.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# ctest, and gtest's test discovery at build time, run the arm64 binaries
# under user-mode QEMU. The arm64 loader and libraries are the multiarch
# ones (/lib/ld-linux-aarch64.so.1), so qemu needs no -L.
find_program(MT_QEMU_AARCH64 qemu-aarch64)
if(MT_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${MT_QEMU_AARCH64})
endif()
