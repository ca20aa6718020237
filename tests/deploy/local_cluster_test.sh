#!/usr/bin/env bash
# ctest Deploy.LocalClusterFromTheCallersDirectory: deploy/local-cluster.sh
# as a user calls it from their own directory.
#   tests/deploy/local_cluster_test.sh BUILD_DIR
# Checks, from exit codes, files and the hub's report (never log wording):
# relative --out and --dataset are the caller's; a hub that fails at once
# ends the script at once with the hub's code (2 for a mistyped flag, 1 for
# a dataset that is not there), not after waiting for a port.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
export MT_BUILD_DIR="$(cd "$1" && pwd)"
caller="$(mktemp -d)"
trap 'rm -rf "$caller"' EXIT
cd "$caller"
fails=()

# A small learnable IDX dataset (as tests/support/idx_writer.h writes).
mkdir data
python3 - data <<'PY'
import random, struct, sys
def split(prefix, n, seed):
    rng = random.Random(seed)
    with open(f"{sys.argv[1]}/{prefix}-images-idx3-ubyte", "wb") as images, \
         open(f"{sys.argv[1]}/{prefix}-labels-idx1-ubyte", "wb") as labels:
        images.write(struct.pack(">IIII", 0x803, n, 28, 28))
        labels.write(struct.pack(">II", 0x801, n))
        for _ in range(n):
            label = rng.randrange(10)
            images.write(bytes((170 if (p // 28) // 2 in (label + 2, label + 3) else 40)
                               + rng.randrange(80) for p in range(28 * 28)))
            labels.write(bytes([label]))
split("train", 256, 1)
split("t10k", 64, 2)
PY

# Relative paths from the caller's directory: a run of 3 steps on ./data,
# its files in ./run.
code=0
timeout 180 bash "$root/deploy/local-cluster.sh" --workers 2 --out run -- --dataset data \
  --steps 3 --global-batch 32 --http-port 0 >"$caller/ok.log" 2>&1 || code=$?
[ "$code" -eq 0 ] || fails+=("a run on ./data exited $code: $(tail -5 "$caller/ok.log")")
if [ -f run/hub.json ]; then
  python3 - run/hub.json <<'PY' || fails+=("./run/hub.json is not the report of the run on ./data")
import json, sys
r = json.load(open(sys.argv[1]))
assert r["steps"] == 3 and len(r["workers"]) == 2, r
PY
else
  fails+=("no hub.json in the caller's ./run")
fi
[ ! -e "$root/run" ] || fails+=("--out run was made in the repository, not the caller's directory")

# A hub that stops at once: the script ends with its code, without waiting
# (the timeout is well under the 20 s it used to wait for a port).
expect_hub_code() {
  local want=$1; shift
  local got=0
  timeout 15 bash "$root/deploy/local-cluster.sh" --workers 1 --out fail -- "$@" \
    >"$caller/fail.log" 2>&1 || got=$?
  [ "$got" -eq "$want" ] || fails+=("mthub $* ended local-cluster.sh with $got, not the hub's $want")
}
expect_hub_code 2 --workres 3
expect_hub_code 1 --dataset missing-data

if [ ${#fails[@]} -gt 0 ]; then
  printf 'FAIL: %s\n' "${fails[@]}"
  exit 1
fi
echo "ok: local-cluster.sh resolves paths from the caller and exits with the hub's code at once"
