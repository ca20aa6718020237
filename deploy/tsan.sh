#!/usr/bin/env bash
# ThreadSanitizer job: builds the hub, worker and kernel test binaries with
# MT_TSAN into ${MT_TSAN_BUILD_DIR:-build-tsan} and runs their unit and
# integration tests (the step coordinator with fake workers as threads, the
# in-process hub and workers over gRPC, the CPU thread pool). Any report
# fails the job. deploy/test.sh runs it after the main suite.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh --test
build="${MT_TSAN_BUILD_DIR:-build-tsan}"
if [ ! -f "$build/build.ninja" ]; then
  # -g1: line tables only, enough for the sanitizer's file:line stacks, and
  # about a quarter less compile time than full debug information.
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    -DMT_TSAN=ON -DMT_OPENCL=OFF -DMT_JNI=OFF >/dev/null
fi
binaries=(kernels_test hub_test worker_test tls_test)
cmake --build "$build" -j "$(nproc)" --target "${binaries[@]}"
# tests/sanitizers/tsan.supp says why each suppression is there.
export TSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/tsan.supp halt_on_error=1 exitcode=66 report_signal_unsafe=0"
for t in "${binaries[@]}"; do
  echo "tsan.sh: $t"
  "$build/tests/$t" --gtest_brief=1
done
echo "tsan.sh: no data races reported"
