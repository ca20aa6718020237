#!/usr/bin/env bash
# Configures and builds mt into ${MT_BUILD_DIR:-build} (Release, Ninja).
#   deploy/build.sh [--target NAME]... [cmake configure options...]
# --target NAME: build only these targets (and what they need), as
# deploy/run-local.sh does with mthub, mtworker and mtmodel; all without.
# The other arguments go to cmake's configure step, e.g. -DMT_SANITIZE=ON;
# without them an already configured tree keeps its settings.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${MT_BUILD_DIR:-build}"
targets=()
configure=()
while [ $# -gt 0 ]; do
  case "$1" in
    --target)
      [ $# -ge 2 ] || { echo "build.sh: --target needs a target name" >&2; exit 2; }
      targets+=(--target "$2"); shift 2 ;;
    *) configure+=("$1"); shift ;;
  esac
done
if [ ! -f "$build/build.ninja" ] || [ ${#configure[@]} -gt 0 ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${configure[@]}" >/dev/null
fi
cmake --build "$build" -j "$(nproc)" "${targets[@]}"
