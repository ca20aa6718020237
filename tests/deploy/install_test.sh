#!/usr/bin/env bash
# ctest Deploy.InstallPutsEveryToolInPlaceAndErrorsNameMtBuildDir (issue 44):
#   - deploy/systemd/install.sh --root installs mthub, mtworker and mtmodel
#     (mtmodel was left out: `mtmodel info` on the hub machine failed);
#   - deploy/local-cluster.sh with binaries it cannot find names
#     MT_BUILD_DIR, the setting that points it at another build.
#   tests/deploy/install_test.sh BUILD_DIR
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$(cd "$1" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fails=()

bash "$root/deploy/systemd/install.sh" --build-dir "$build" --root "$work/root" >"$work/install.log" 2>&1 ||
  fails+=("install.sh --root failed: $(tail -3 "$work/install.log")")
for b in mthub mtworker mtmodel; do
  [ -x "$work/root/usr/local/bin/$b" ] || fails+=("install.sh did not install $b")
done
"$work/root/usr/local/bin/mtmodel" info lenet5 >/dev/null 2>&1 || fails+=("the installed mtmodel does not run")

code=0
MT_BUILD_DIR="$work/nowhere" bash "$root/deploy/local-cluster.sh" >"$work/cluster.log" 2>&1 || code=$?
[ "$code" -eq 1 ] || fails+=("local-cluster.sh without binaries exited $code, not 1")
grep -q "MT_BUILD_DIR" "$work/cluster.log" || fails+=("local-cluster.sh's error does not name MT_BUILD_DIR: $(cat "$work/cluster.log")")

if [ ${#fails[@]} -gt 0 ]; then
  printf 'FAIL: %s\n' "${fails[@]}"
  exit 1
fi
echo "install_test: install.sh installs mthub, mtworker and mtmodel; local-cluster.sh names MT_BUILD_DIR"
