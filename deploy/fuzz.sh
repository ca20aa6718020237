#!/usr/bin/env bash
# Fuzzing job: builds the libFuzzer harnesses of tests/fuzz with clang under
# ASan and UBSan into ${MT_FUZZ_BUILD_DIR:-build-fuzz} and runs each for
# ${MT_FUZZ_SECONDS:-14} seconds, starting from its committed seed corpus
# (tests/fuzz/corpus/NAME; what it finds on the way stays in the build tree).
# Any crash, leak, sanitizer report, timeout (30 s an input) or input that
# needs more than 2 GB fails the job, and the input that did it is kept in
# the build tree and named. deploy/test.sh runs it after the main suite.
#   deploy/fuzz.sh [NAME...]     only these harnesses
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh --test
build="${MT_FUZZ_BUILD_DIR:-build-fuzz}"
seconds="${MT_FUZZ_SECONDS:-14}"  # eight harnesses in about the two minutes five took at 25
fuzzers=(worker_hub_messages_fuzz hub_worker_messages_fuzz idx_reader_fuzz checkpoint_fuzz model_spec_fuzz
         onnx_import_fuzz image_decode_fuzz image_cache_fuzz)
[ $# -gt 0 ] && fuzzers=("$@")
if [ ! -f "$build/build.ninja" ]; then
  # -g1: line tables only, enough for the sanitizer's file:line stacks, and
  # about a quarter less compile time than full debug information.
  CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    -DMT_FUZZ=ON -DMT_TESTS=OFF -DMT_OPENCL=OFF -DMT_JNI=OFF -DMT_NATIVE=OFF >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target "${fuzzers[@]}"
export UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1"
for f in "${fuzzers[@]}"; do
  corpus="$build/fuzz-corpus/$f"
  artifacts="$build/fuzz-findings/$f/"
  mkdir -p "$corpus" "$artifacts"
  echo "fuzz.sh: $f for ${seconds}s"
  if ! "$build/tests/fuzz/$f" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$artifacts" "$corpus" "tests/fuzz/corpus/$f" \
      >"$build/fuzz-$f.log" 2>&1; then
    tail -n 60 "$build/fuzz-$f.log"
    echo "fuzz.sh: $f found a problem; the input is in $artifacts" >&2
    exit 1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$build/fuzz-$f.log" | tr '\n' ' '
  echo
done
echo "fuzz.sh: no findings"
