#!/usr/bin/env bash
# ctest Deploy.FirstRunInstallsAndBuildsOnlyTheMainJob (issue 44): what
# deploy/run-local.sh and deploy/test.sh install and build, seen through
# stand-ins for apt-get, sudo, dpkg-query, cmake, ctest, node and npm on
# PATH that record their arguments (nothing is installed or built):
#   - run-local.sh installs no test package (Chromium, clang, GoogleTest,
#     a JDK, PoCL, node) and builds mthub, mtworker and mtmodel only, in a
#     tree configured without the tests and without -Werror;
#   - test.sh installs the test packages too and builds everything with
#     -DMT_TESTS=ON -DMT_WERROR=ON (CI fails on a new warning);
#   - the README's first lines give both commands, and .ci/run runs the
#     test one.
#   tests/deploy/first_run_test.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fails=()
fail() { fails+=("$1"); }

mkdir "$work/bin"
log="$work/calls.log"
stub() {  # stub NAME BODY: a command that logs its arguments, then runs BODY
  printf '#!/usr/bin/env bash\necho "%s $*" >> "%s"\n%s\n' "$1" "$log" "$2" > "$work/bin/$1"
  chmod +x "$work/bin/$1"
}
stub dpkg-query 'exit 1'  # nothing is installed
stub sudo 'exec "$@"'
stub apt-get 'exit 0'
stub cmake 'exit 0'
stub ctest 'exit 0'
stub node 'exit 1'
stub npm 'exit 0'
export PATH="$work/bin:$PATH"

test_packages=(chromium clang clang-format libgtest-dev libgmock-dev libcpp-httplib-dev
               openjdk-17-jdk-headless pocl-opencl-icd python3-onnx)
main_packages=(libgrpc++-dev protobuf-compiler-grpc libeigen3-dev dataset-fashion-mnist libjs-chart.js
               libmicrohttpd-dev)
# What the last script did (files, not pipes into grep -q: with pipefail a
# writer cut short by grep's early exit would read as no match).
record() {
  { grep '^apt-get install' "$log" || true; } | tr ' ' '\n' > "$work/installed"
  configured=$(grep '^cmake -S' "$log" || true)
  built=$(grep '^cmake --build' "$log" || true)
}
installed() { grep -qx -- "$1" "$work/installed"; }

# run-local.sh: a fresh tree. With no binaries built, local-cluster.sh stops
# at once (exit 1) instead of training.
: > "$log"
code=0
MT_BUILD_DIR="$work/build" bash "$root/deploy/run-local.sh" >"$work/run-local.out" 2>&1 || code=$?
[ "$code" = 1 ] || fail "run-local.sh exited $code, expected 1 (no binaries): $(cat "$work/run-local.out")"
record
for p in "${test_packages[@]}" nodejs npm; do
  installed "$p" && fail "run-local.sh installs the test package $p"
done
for p in "${main_packages[@]}"; do
  installed "$p" || fail "run-local.sh does not install $p"
done
[[ "$configured" == *-DMT_TESTS=OFF* ]] || fail "run-local.sh configures with the tests: $configured"
[[ "$configured" == *-DMT_WERROR=ON* ]] && fail "run-local.sh builds with -Werror: $configured"
[ "$(sed 's/ -j [0-9]*//' <<<"$built")" = "cmake --build $work/build --target mthub --target mtworker --target mtmodel" ] ||
  fail "run-local.sh builds more (or less) than the three programs: $built"
grep -q '^npm' "$log" && fail "run-local.sh installs ONNX Runtime for node"

# test.sh: everything, warnings as errors.
: > "$log"
code=0
MT_BUILD_DIR="$work/build" MT_SKIP_TSAN=1 MT_SKIP_FUZZ=1 MT_SKIP_ARM64=1 \
  bash "$root/deploy/test.sh" >"$work/test.out" 2>&1 || code=$?
[ "$code" = 0 ] || fail "test.sh exited $code: $(cat "$work/test.out")"
record
for p in "${test_packages[@]}" "${main_packages[@]}"; do
  installed "$p" || fail "test.sh does not install $p"
done
[[ "$configured" == *-DMT_TESTS=ON* ]] || fail "test.sh does not configure the tests: $configured"
[[ "$configured" == *-DMT_WERROR=ON* ]] || fail "test.sh builds without -Werror: $configured"
[[ "$built" == *--target* ]] && fail "test.sh builds only some targets: $built"
grep -q '^ctest' "$log" || fail "test.sh runs no ctest"

# The two commands of the README's first lines; CI runs the second.
head -8 "$root/README.md" > "$work/readme"
grep -q '^ *bash deploy/run-local.sh' "$work/readme" || fail "README's first lines lack bash deploy/run-local.sh"
grep -q '^ *bash deploy/test.sh' "$work/readme" || fail "README's first lines lack bash deploy/test.sh"
[ "$(grep -v '^#\|^set \|^cd \|^$' "$root/.ci/run")" = "bash deploy/test.sh" ] || fail ".ci/run does not run exactly bash deploy/test.sh"

# --list names the same sets without installing.
bash "$root/deploy/install-deps.sh" --list > "$work/main-list" || fail "install-deps.sh --list failed"
bash "$root/deploy/install-deps.sh" --test --list > "$work/test-list" || fail "install-deps.sh --test --list failed"
grep -qx chromium "$work/main-list" && fail "install-deps.sh --list names chromium"
grep -qx chromium "$work/test-list" || fail "install-deps.sh --test --list lacks chromium"

if [ ${#fails[@]} -gt 0 ]; then
  printf 'FAIL: %s\n' "${fails[@]}"
  exit 1
fi
echo "first run: run-local.sh installs and builds the main job only; test.sh all, with -Werror"
