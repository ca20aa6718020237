#!/usr/bin/env bash
# Cross-builds mt for a phone-class CPU on a Debian 12 x86-64 machine and
# optionally runs the unit tests under user-mode QEMU.
#   deploy/cross-build.sh arm64 [--test] [--target NAME]... [cmake -D options...]
# arm64: ARMv8.2-A (NEON), no -march=native, with the toolchain file
# deploy/toolchains/arm64.cmake, into ${MT_BUILD_DIR:-build-arm64}. Installs
# what it needs first (root or sudo): the arm64 architecture in dpkg, the
# cross compiler, qemu-user and the arm64 -dev packages, next to the host's
# protoc and grpc_cpp_plugin that generate the code.
# --test: then `ctest -L unit` under qemu-aarch64 (OpenCL and network cases
# are not unit tests; docs/android.md says what this run proves).
# --target NAME: build only these targets (and test only their unit tests),
# as CI does: deploy/test.sh.
# MT_CROSS_SKIP_INSTALL=1 skips the package step.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; }
arch="${1:-}"
case "$arch" in
  arm64) shift ;;
  -h|--help) usage; exit 0 ;;
  "") echo "cross-build.sh: name the target architecture (arm64)" >&2; usage >&2; exit 2 ;;
  *) echo "cross-build.sh: unknown architecture '$arch' (arm64 is the one supported)" >&2; exit 2 ;;
esac
run_tests=0
cmake_args=()
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --test) run_tests=1; shift ;;
    --target)
      [ $# -ge 2 ] || { echo "cross-build.sh: --target needs a target name" >&2; exit 2; }
      targets+=(--target "$2"); shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -D*) cmake_args+=("$1"); shift ;;
    *) echo "cross-build.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

# Host tools, arch-independent files (Eigen's headers, the Chart.js that
# mthub embeds, libonnx-dev's onnx.proto: see model_io/CMakeLists.txt) and
# the arm64 libraries, from Debian's multiarch archive.
host_packages=(
  cmake ninja-build pkg-config crossbuild-essential-arm64 qemu-user
  protobuf-compiler protobuf-compiler-grpc libonnx-dev
  libeigen3-dev libcli11-dev nlohmann-json3-dev opencl-headers libjs-chart.js
)
arm64_packages=(
  libprotobuf-dev libgrpc++-dev libgrpc-dev libssl-dev zlib1g-dev libspdlog-dev
  libgtest-dev libgmock-dev ocl-icd-opencl-dev libclblast-dev libcpp-httplib-dev
  libpng-dev libjpeg62-turbo-dev libmicrohttpd-dev
)
install_packages() {
  local missing=() p sudo=""
  for p in "${host_packages[@]}" "${arm64_packages[@]/%/:arm64}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "cross-build.sh: need root to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  echo "cross-build.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  dpkg --print-foreign-architectures | grep -qx arm64 || $sudo dpkg --add-architecture arm64
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
[ "${MT_CROSS_SKIP_INSTALL:-0}" = 1 ] || install_packages

build="${MT_BUILD_DIR:-build-arm64}"
if [ ! -f "$build/build.ninja" ] || [ ${#cmake_args[@]} -gt 0 ]; then
  # No JNI bridge: it needs an arm64 JDK here, and Android builds it with the NDK.
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_TOOLCHAIN_FILE="$PWD/deploy/toolchains/arm64.cmake" \
    -DMT_NATIVE=OFF -DMT_JNI=OFF "${cmake_args[@]}" >/dev/null
fi
cmake --build "$build" -j "$(nproc)" "${targets[@]}"
echo "cross-build.sh: arm64 binaries in $build (hub/mthub, worker/mtworker, modeltool/mtmodel)"
if [ "$run_tests" = 1 ]; then
  # Only the unit tests of the binaries built: those of a binary left out
  # are a NOT_BUILT placeholder without labels.
  # No OpenCL device under emulation: an empty vendor list, so the loader finds none.
  mkdir -p "$build/no-opencl-vendors"
  export OCL_ICD_VENDORS="$PWD/$build/no-opencl-vendors"
  ctest --test-dir "$build" -L unit --output-on-failure -j "$(nproc)" --timeout 900
fi
