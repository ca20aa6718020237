#!/usr/bin/env bash
# Checks the systemd units and example environment files in UNIT_DIR:
#   deploy/systemd/verify.sh UNIT_DIR MTHUB MTWORKER
# 1. `systemd-analyze verify` on a copy of each unit whose ExecStart points
#    at MTHUB or MTWORKER (it needs the binary to exist); mtworker@.service
#    is checked as an instance. Any message about our units fails, not only
#    errors: unknown keys and bad values are warnings to systemd.
# 2. Every --flag in the env files (comments included) and in the units'
#    ExecStart lines is one that the binary's --help lists, and the command
#    line each unit would run, with the env file's arguments, is accepted
#    (`BINARY ARGS... --help` exits 0).
# Exit codes: 0 passed, 1 a check failed, 2 bad usage, 77 skipped because
# systemd-analyze is not installed (CTest's SKIP_RETURN_CODE).
set -uo pipefail

die_usage() { echo "verify.sh: $*" >&2; echo "usage: verify.sh UNIT_DIR MTHUB MTWORKER" >&2; exit 2; }
[ $# -eq 3 ] || die_usage "expected 3 arguments, got $#"
unit_dir=$1 mthub=$2 mtworker=$3
[ -d "$unit_dir" ] || die_usage "$unit_dir is not a directory"
for b in "$mthub" "$mtworker"; do
  [ -x "$b" ] || { echo "verify.sh: $b is not an executable (build the mthub and mtworker targets first)" >&2; exit 1; }
done
if ! command -v systemd-analyze >/dev/null 2>&1; then
  echo "verify.sh: systemd-analyze is not installed; skipping (Debian: apt-get install systemd)"
  exit 77
fi

units=(mthub.service mtworker.service mtworker@.service)
envs=(mthub.env mtworker.env)
for f in "${units[@]}" "${envs[@]}"; do
  [ -f "$unit_dir/$f" ] || { echo "verify.sh: $unit_dir/$f is missing" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mt-verify.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# --- 1. systemd-analyze verify ----------------------------------------------
# The copies run links in $tmp/bin (a path without spaces), so the check
# does not depend on where the build directory is.
mkdir -p "$tmp/bin" "$tmp/units"
ln -s "$(realpath "$mthub")" "$tmp/bin/mthub"
ln -s "$(realpath "$mtworker")" "$tmp/bin/mtworker"
for u in "${units[@]}"; do
  sed -e "s|/usr/local/bin/mthub\b|$tmp/bin/mthub|g" -e "s|/usr/local/bin/mtworker\b|$tmp/bin/mtworker|g" \
    "$unit_dir/$u" >"$tmp/units/$u"
done
# A template cannot be loaded as such; verify an instance of it.
mv "$tmp/units/mtworker@.service" "$tmp/units/mtworker@verify.service"
checked=(mthub.service mtworker.service mtworker@verify.service)
paths=()
for u in "${checked[@]}"; do paths+=("$tmp/units/$u"); done

echo "== systemd-analyze verify (systemd $(systemd-analyze --version | awk 'NR==1{print $2}'))"
out=$(cd "$tmp" && SYSTEMD_LOG_COLOR=0 systemd-analyze verify --man=no "${paths[@]}" 2>&1)
rc=$?
[ -n "$out" ] && printf '%s\n' "$out"
[ $rc -eq 0 ] || fail "systemd-analyze verify exited $rc"
# Messages about other units (the system's own) are not ours to fail on.
ours=$(printf '%s\n' "$out" | grep -E "$tmp|mthub|mtworker" || true)
[ -z "$ours" ] || fail "systemd-analyze verify has messages about our units (above)"
[ $rc -eq 0 ] && [ -z "$ours" ] && echo "ok: ${checked[*]}"

# --- 2. flags ---------------------------------------------------------------
# help_flags BINARY: the flags its --help lists, one a line.
help_flags() { "$1" --help 2>/dev/null | grep -oE '^  --[a-z0-9][a-z0-9-]*' | sed 's/^  //' | sort -u; }
# env_value FILE VAR: VAR's value in an EnvironmentFile (double quotes off).
env_value() {
  sed -nE "s/^[[:space:]]*$2=\"?([^\"]*)\"?[[:space:]]*\$/\1/p" "$1" | tail -n 1
}

check_flags() {  # BINARY_NAME BINARY ENV_FILE ARGS_VAR UNIT...
  local name=$1 bin=$2 env=$3 var=$4
  shift 4
  local known
  known=$(help_flags "$bin")
  [ -n "$known" ] || { fail "$bin --help lists no flags"; return; }
  echo "== flags of $name: $(echo "$known" | wc -l) in --help"
  local where flag n=0
  # Every --flag mentioned in the env file, comments included, and in the
  # units' ExecStart lines.
  while IFS=: read -r where flag; do
    n=$((n + 1))
    grep -qxF -- "$flag" <<<"$known" || fail "$where uses $flag, which '$name --help' does not list"
  done < <(
    grep -noE -- '--[a-z][a-z0-9-]*' "$unit_dir/$env" | awk -F: -v f="$env" '{print f "#" $1 ":" $2}'
    for u in "$@"; do
      grep -nE '^ExecStart=' "$unit_dir/$u" | grep -oE -- '--[a-z][a-z0-9-]*' | sed "s|^|$u:|"
    done
  )
  [ $n -gt 0 ] || fail "no --flag found in $env"
  # The command line each unit would run, specifiers and $VAR filled in.
  local value u line args
  value=$(env_value "$unit_dir/$env" "$var")
  [ -n "$value" ] || { fail "$env sets no $var"; return; }
  for u in "$@"; do
    line=$(sed -nE 's/^ExecStart=[^ ]+ ?//p' "$unit_dir/$u" | head -n 1)
    line=${line//%S/\/var\/lib}
    line=${line//%C/\/var\/cache}
    line=${line//%i/verify}
    line=${line//%I/verify}
    line=${line//\$\{$var\}/$value}
    line=${line//\$$var/$value}
    read -ra args <<<"$line"
    if out=$(timeout 20 "$bin" "${args[@]}" --help 2>&1 >/dev/null); then
      echo "ok: $u accepts: $name ${args[*]}"
    else
      fail "$u: '$name ${args[*]}' is refused: $out"
    fi
  done
}
check_flags mthub "$mthub" mthub.env MTHUB_ARGS mthub.service
check_flags mtworker "$mtworker" mtworker.env MTWORKER_ARGS mtworker.service mtworker@.service

if [ $failures -gt 0 ]; then
  echo "verify.sh: $failures check(s) failed"
  exit 1
fi
echo "verify.sh: all checks passed"
