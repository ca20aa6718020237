#!/usr/bin/env bash
# The style check can fail: in a scratch git repository with this project's
# .clang-format, a file over the limit, a badly formatted one and a core/
# file that includes the wire protocol are all named and the check exits 1;
# once fixed it exits 0; a bad flag exits 2.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/tests/style" "$scratch/core"
cp "$root/tests/style/check_style.sh" "$scratch/tests/style/"
cp "$root/.clang-format" "$scratch/"
cd "$scratch"
git init -q .
for i in $(seq 501); do echo "// line $i"; done >core/long.h
printf 'int  f( int x ){return x;}\n' >core/ugly.cc
printf 'int g(int x) { return x; }\n' >core/fine.cc
printf '#include "hub.pb.h"\n' >core/wire.cc
git add -A
fail() { echo "check_style_test: $*" >&2; exit 1; }

rc=0; out=$(tests/style/check_style.sh 2>&1) || rc=$?
[ "$rc" = 1 ] || fail "expected exit 1 with offences, got $rc: $out"
grep -q 'core/long.h: 501 lines' <<<"$out" || fail "the long file is not named: $out"
grep -q 'core/ugly.cc: differs' <<<"$out" || fail "the unformatted file is not named: $out"
grep -q 'core/wire.cc: core/ includes the wire' <<<"$out" || fail "the wire include is not named: $out"
grep -q 'core/fine.cc' <<<"$out" && fail "a clean file is named: $out"

# --changed: only what changed since a commit is checked.
git -c user.name=t -c user.email=t@t commit -qm base
printf 'int  h( ){return 1;}\n' >core/fine.cc
rc=0; out=$(tests/style/check_style.sh --changed HEAD 2>&1) || rc=$?
[ "$rc" = 1 ] || fail "--changed HEAD: expected 1, got $rc: $out"
grep -q 'core/long.h' <<<"$out" && fail "--changed HEAD checked an unchanged file: $out"
grep -q 'core/fine.cc: differs' <<<"$out" || fail "--changed HEAD missed the changed file: $out"

sed -i '501d' core/long.h
printf '#include "model.pb.h"\n' >core/wire.cc
clang-format -i core/ugly.cc core/fine.cc
rc=0; out=$(tests/style/check_style.sh 2>&1) || rc=$?
[ "$rc" = 0 ] || fail "expected 0 once fixed, got $rc: $out"

rc=0; tests/style/check_style.sh --bogus >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "a bad flag should exit 2, got $rc"
echo "check_style_test: ok"
