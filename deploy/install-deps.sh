#!/usr/bin/env bash
# Installs every Debian package mt needs to build, test and train. Idempotent:
# quiet when everything is already there. Needs root (or sudo) to install.
#   deploy/install-deps.sh            build + test + train dependencies
#   deploy/install-deps.sh --bench    also PyTorch, for the peer benchmarks
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config zlib1g-dev libpng-dev libjpeg-dev
  libprotobuf-dev protobuf-compiler libgrpc++-dev libgrpc-dev protobuf-compiler-grpc
  libssl-dev openssl
  libeigen3-dev libspdlog-dev libcli11-dev libgtest-dev libgmock-dev nlohmann-json3-dev
  openjdk-17-jdk-headless
  ocl-icd-opencl-dev opencl-headers libclblast-dev pocl-opencl-icd
  dataset-fashion-mnist
  clang clang-format libclang-rt-14-dev
  libonnx-dev python3-onnx
  libcpp-httplib-dev libjs-chart.js chromium
)
for arg in "$@"; do
  case "$arg" in
    --bench) packages+=(python3-torch python3-numpy) ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "install-deps.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

# Node runs ONNX Runtime (WASM) for the export tests. Debian's nodejs and
# npm only where there is no node at all: a Node from elsewhere (NodeSource)
# bundles its own npm, which Debian's npm package would conflict with.
command -v npm >/dev/null || packages+=(nodejs npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The ONNX tests' runtime: onnxruntime-web (WASM, no native download) pinned by
# tests/onnx/package-lock.json. Skipped when that version is already there;
# without npm or the registry the ONNX tests skip (77), so only warn.
onnx_node_modules() {
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
echo "install-deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
onnx_node_modules
