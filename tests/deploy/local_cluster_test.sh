#!/usr/bin/env bash
# ctest Deploy.LocalClusterFromTheCallersDirectory: deploy/local-cluster.sh
# as a user calls it from their own directory.
#   tests/deploy/local_cluster_test.sh BUILD_DIR
# Checks, from exit codes, files and the hub's report (never log wording):
# relative --out and --dataset are the caller's; Ctrl-C mid-run ends it
# cleanly (exit 0, a report); a hub that fails at once ends the script at
# once with the hub's code (2 for a mistyped flag, 1 for a dataset that is
# not there), not after waiting for a port.
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

# Relative paths from the caller's directory: a run of 24 steps on ./data (enough
# to leave chance behind: a model at chance fails the run),
# its files in ./run.
code=0
timeout 180 bash "$root/deploy/local-cluster.sh" --workers 2 --out run -- --dataset data \
  --steps 24 --global-batch 32 --http-port 0 >"$caller/ok.log" 2>&1 || code=$?
[ "$code" -eq 0 ] || fails+=("a run on ./data exited $code: $(tail -5 "$caller/ok.log")")
if [ -f run/hub.json ]; then
  python3 - run/hub.json <<'PY' || fails+=("./run/hub.json is not the report of the run on ./data")
import json, sys
r = json.load(open(sys.argv[1]))
assert r["steps"] == 24 and len(r["workers"]) == 2, r
PY
else
  fails+=("no hub.json in the caller's ./run")
fi
[ ! -e "$root/run" ] || fails+=("--out run was made in the repository, not the caller's directory")

# Ctrl-C (SIGINT to the script's process group) mid-run: the hub says
# goodbye and writes its report, and the script exits 0.
rm -rf run
python3 - "$root/deploy/local-cluster.sh" <<'PY' || fails+=("Ctrl-C mid-run: $(tail -3 "$caller/int.log")")
import os, signal, subprocess, sys, time
p = subprocess.Popen(["bash", sys.argv[1], "--workers", "2", "--out", "run", "--", "--dataset", "data",
                      "--epochs", "1000", "--global-batch", "32", "--http-port", "0"],
                     stdout=open("int.log", "w"), stderr=subprocess.STDOUT, start_new_session=True)
deadline = time.time() + 60
while not os.path.exists("run/worker1.log") and time.time() < deadline:
    time.sleep(0.1)
time.sleep(3)
os.killpg(p.pid, signal.SIGINT)
code = p.wait(60)
assert code == 0, f"exit {code}"
assert os.path.exists("run/hub.json"), "no report"
PY

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
