#!/usr/bin/env bash
# Fresh machine to a passing suite: install dependencies, build, run every
# test, the ThreadSanitizer job (deploy/tsan.sh; MT_SKIP_TSAN=1 skips it) and
# the fuzzing job (deploy/fuzz.sh, ASan and UBSan; MT_SKIP_FUZZ=1 skips it).
# The fast inner loop is `ctest --test-dir build -L unit`.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh
deploy/build.sh "$@"
build="${MT_BUILD_DIR:-build}"
# PoCL compiles OpenCL kernels once and caches them; keep the cache in the build tree.
export POCL_CACHE_DIR="${POCL_CACHE_DIR:-$PWD/$build/pocl-cache}"
# The sanitizer jobs first, so ctest's summary is the last thing printed.
if [ "${MT_SKIP_TSAN:-0}" != 1 ]; then
  deploy/tsan.sh
fi
if [ "${MT_SKIP_FUZZ:-0}" != 1 ]; then
  deploy/fuzz.sh
fi
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --timeout 600
