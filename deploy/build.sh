#!/usr/bin/env bash
# Configures and builds mt into ${MT_BUILD_DIR:-build} (Release, Ninja).
# Extra arguments go to cmake's configure step, e.g. -DMT_SANITIZE=ON.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${MT_BUILD_DIR:-build}"
if [ ! -f "$build/build.ninja" ] || [ $# -gt 0 ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
fi
cmake --build "$build" -j "$(nproc)"
