#!/usr/bin/env bash
# Fresh machine to a passing suite: install dependencies (the test suite's
# too: deploy/install-deps.sh --test), build everything with warnings as
# errors (MT_WERROR), run every test, the ThreadSanitizer job
# (deploy/tsan.sh; MT_SKIP_TSAN=1 skips it), the fuzzing job
# (deploy/fuzz.sh, ASan and UBSan; MT_SKIP_FUZZ=1 skips it) and the arm64
# job (MT_SKIP_ARM64=1 skips it): deploy/cross-build.sh builds the kernel
# tests and mtworker for arm64 into ${MT_ARM64_BUILD_DIR:-build-arm64},
# runs the kernel unit tests under qemu-aarch64, and the suite's MixedArch
# test trains that worker beside an x86 one. The whole arm64 unit suite is
# `deploy/cross-build.sh arm64 --test` (about 15 minutes on 2 cores).
# The fast inner loop is `ctest --test-dir build -L unit`.
set -euo pipefail
cd "$(dirname "$0")/.."
timings=()
# Runs a job and notes how long it took; the summary prints however the
# script ends.
timed() {
  local name="$1" start=$SECONDS rc=0
  shift
  "$@" || rc=$?
  timings+=("$name $((SECONDS - start))s")
  return $rc
}
trap 'echo "test.sh: took ${timings[*]:-nothing}"' EXIT
timed install deploy/install-deps.sh --test
# Every target, tests included, and a warning is an error: CI stays at zero
# warnings (deploy/run-local.sh builds without -Werror).
timed build deploy/build.sh -DMT_TESTS=ON -DMT_WERROR=ON "$@"
build="${MT_BUILD_DIR:-build}"
# PoCL compiles OpenCL kernels once and caches them; keep the cache in the build tree.
export POCL_CACHE_DIR="${POCL_CACHE_DIR:-$PWD/$build/pocl-cache}"
# The other jobs first, so ctest's summary is (nearly) the last thing printed.
if [ "${MT_SKIP_TSAN:-0}" != 1 ]; then
  timed tsan deploy/tsan.sh
fi
if [ "${MT_SKIP_FUZZ:-0}" != 1 ]; then
  timed fuzz deploy/fuzz.sh
fi
if [ "${MT_SKIP_ARM64:-0}" != 1 ]; then
  arm64="${MT_ARM64_BUILD_DIR:-build-arm64}"
  timed arm64 env MT_BUILD_DIR="$arm64" deploy/cross-build.sh arm64 --test \
    --target kernels_test --target mtworker
  # Where the MixedArch test finds the arm64 worker.
  export MT_ARM64_BUILD_DIR="$(cd "$arm64" && pwd)"
fi
timed ctest ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --timeout 600
