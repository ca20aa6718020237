#!/usr/bin/env bash
# The rules CI holds every source file to:
#   - C and C++ files are as .clang-format writes them (clang-format 14+);
#   - no source file (C++, OpenCL, proto, Python, shell, Java, CMake) is over
#     500 lines: a longer file holds more than one concept, split it;
#   - core/ knows nothing of the wire protocol: no file there includes
#     hub.proto's messages or gRPC (docs/architecture.md, Dependencies).
# Checks every tracked file, or with --changed REF only those changed since
# REF (e.g. origin/main). Prints each offence and exits 1 on any, 2 on a bad
# command line.
#   tests/style/check_style.sh [--changed REF] [--max-lines N]
set -euo pipefail
cd "$(dirname "$0")/../.."
max_lines=500
ref=""
while [ $# -gt 0 ]; do
  case "$1" in
    --changed) ref="${2:?--changed needs a git revision}"; shift 2 ;;
    --max-lines) max_lines="${2:?--max-lines needs a number}"; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "check_style.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
command -v clang-format >/dev/null || { echo "check_style.sh: clang-format is not installed" >&2; exit 1; }
git rev-parse --git-dir >/dev/null 2>&1 || { echo "check_style.sh: not a git checkout" >&2; exit 1; }

sources='\.(cc|h|c|cpp|cl|proto|py|sh|java|cmake)$|(^|/)CMakeLists\.txt$'
if [ -n "$ref" ]; then
  files=$(git diff --name-only --diff-filter=ACMR "$ref" -- | grep -E "$sources" || true)
else
  files=$(git ls-files | grep -E "$sources" || true)
fi

failed=0
for f in $files; do
  [ -f "$f" ] || continue
  lines=$(wc -l <"$f")
  if [ "$lines" -gt "$max_lines" ]; then
    echo "$f: $lines lines, over the limit of $max_lines; split it by concept"
    failed=1
  fi
done
cxx=$(printf '%s\n' $files | grep -E '\.(cc|h|c|cpp)$' || true)
if [ -n "$cxx" ]; then
  # One clang-format per batch of files; each offending file is named in its warnings.
  unformatted=$(printf '%s\n' $cxx | xargs -r clang-format --dry-run 2>&1 |
                grep -oE '^[^:]+:[0-9]+:[0-9]+: warning' | cut -d: -f1 | sort -u || true)
  for f in $unformatted; do
    echo "$f: differs from .clang-format (fix with: clang-format -i $f)"
    failed=1
  done
fi
core_cxx=$(printf '%s\n' $cxx | grep -E '^core/' || true)
for f in $core_cxx; do
  [ -f "$f" ] || continue
  if grep -qE '^#include [<"](hub\.(grpc\.)?pb\.h|proto/wire\.h|grpcpp?/)' "$f"; then
    echo "$f: core/ includes the wire protocol; convert in wire/ instead"
    failed=1
  fi
done
[ "$failed" = 0 ] && echo "check_style.sh: $(printf '%s\n' $files | grep -c . || true) files checked, all within the rules"
exit "$failed"
