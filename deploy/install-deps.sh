#!/usr/bin/env bash
# Installs the Debian packages mt needs. Idempotent: quiet when everything is
# already there. Needs root (or sudo) to install.
#   deploy/install-deps.sh            build and train: mthub, mtworker, mtmodel
#                                     and Fashion-MNIST (deploy/run-local.sh)
#   deploy/install-deps.sh --test     also what the test suite needs: GoogleTest,
#                                     clang, PoCL, a JDK, Chromium, ONNX Runtime
#                                     for node... (deploy/test.sh)
#   deploy/install-deps.sh --bench    also PyTorch, for the peer benchmarks
#   deploy/install-deps.sh --list     print the packages the other options
#                                     name, one a line, and install nothing
set -euo pipefail

# What CMake needs to configure with -DMT_TESTS=OFF and build the three
# programs (the OpenCL headers and CLBlast too: the binaries drive a GPU
# where the device has a driver; libmicrohttpd, the hub's dashboard
# server), and the dataset the main job trains on.
packages=(
  build-essential cmake ninja-build pkg-config zlib1g-dev libpng-dev libjpeg-dev
  libprotobuf-dev protobuf-compiler libgrpc++-dev libgrpc-dev protobuf-compiler-grpc
  libssl-dev
  libeigen3-dev libspdlog-dev libcli11-dev nlohmann-json3-dev
  ocl-icd-opencl-dev opencl-headers libclblast-dev
  libonnx-dev libjs-chart.js libmicrohttpd-dev
  dataset-fashion-mnist
)
# The suite's own: GoogleTest and the HTTP client of the dashboard tests,
# the JNI bridge's JDK, an OpenCL driver for the CPU (PoCL), clang for the
# fuzzers and clang-format for the style check, the ONNX checker, openssl
# for the TLS tests, Chromium for the dashboard's page.
test_packages=(
  libgtest-dev libgmock-dev libcpp-httplib-dev
  openjdk-17-jdk-headless
  pocl-opencl-icd
  clang clang-format libclang-rt-14-dev
  python3-onnx openssl
  chromium
)
bench_packages=(python3-torch python3-numpy)

tests=0 list=0
for arg in "$@"; do
  case "$arg" in
    --test) tests=1 ;;
    --bench) packages+=("${bench_packages[@]}") ;;
    --list) list=1 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "install-deps.sh: unknown option $arg (see --help)" >&2; exit 2 ;;
  esac
done
if [ "$tests" = 1 ]; then
  packages+=("${test_packages[@]}")
  # Node runs ONNX Runtime (WASM) for the export tests. Debian's nodejs and
  # npm only where there is no node at all: a Node from elsewhere
  # (NodeSource) bundles its own npm, which Debian's npm package would
  # conflict with.
  command -v npm >/dev/null || packages+=(nodejs npm)
fi
if [ "$list" = 1 ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The ONNX tests' runtime: onnxruntime-web (WASM, no native download) pinned by
# tests/onnx/package-lock.json. Skipped when that version is already there;
# without npm or the registry the ONNX tests skip (77), so only warn.
onnx_node_modules() {
  [ "$tests" = 1 ] || return 0
  local dir want have
  dir="$(cd "$(dirname "$0")/.." && pwd)/tests/onnx"
  command -v npm >/dev/null || { echo "install-deps.sh: no npm: the ONNX Runtime tests will skip" >&2; return 0; }
  want=$(node -p "require('$dir/package.json').dependencies['onnxruntime-web']" 2>/dev/null || true)
  have=$(node -p "require('$dir/node_modules/onnxruntime-web/package.json').version" 2>/dev/null || true)
  [ -n "$want" ] && [ "$want" = "$have" ] && return 0
  npm ci --prefix "$dir" --no-audit --no-fund --prefer-offline --loglevel=error >/dev/null ||
    echo "install-deps.sh: npm ci in $dir failed: the ONNX Runtime tests will skip" >&2
}
[ ${#missing[@]} -eq 0 ] && { onnx_node_modules; exit 0; }

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps.sh: need root to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "install-deps.sh: installing ${#missing[@]} package(s) and what they need: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
onnx_node_modules
