#!/usr/bin/env bash
# Installs every Debian package mt needs to build, test and train. Idempotent:
# quiet when everything is already there. Needs root (or sudo) to install.
#   deploy/install-deps.sh            build + test + train dependencies
#   deploy/install-deps.sh --bench    also PyTorch, for the peer benchmarks
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config zlib1g-dev
  libprotobuf-dev protobuf-compiler libgrpc++-dev libgrpc-dev protobuf-compiler-grpc
  libssl-dev openssl
  libeigen3-dev libspdlog-dev libcli11-dev libgtest-dev libgmock-dev nlohmann-json3-dev
  openjdk-17-jdk-headless
  ocl-icd-opencl-dev opencl-headers libclblast-dev pocl-opencl-icd
  dataset-fashion-mnist
  clang libclang-rt-14-dev
)
for arg in "$@"; do
  case "$arg" in
    --bench) packages+=(python3-torch python3-numpy) ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "install-deps.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps.sh: need root to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "install-deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
