#!/usr/bin/env bash
# Starts a hub and N workers on this machine, waits for the run to end, and
# prints the hub's final accuracy. Logs and reports go to OUT_DIR. They talk
# TLS: the hub keeps its certificate in OUT_DIR/state, and the workers trust
# exactly that certificate (--tls-ca); with --insecure among the mthub flags,
# everyone speaks plaintext.
#   deploy/local-cluster.sh [--workers 3] [--out DIR] [-- extra mthub flags]
# Paths (--out, MT_BUILD_DIR, and --dataset, --model, ... among the mthub
# flags) are the caller's: everything runs in the directory it is called
# from. Ctrl-C stops the hub, which says goodbye to the workers and
# checkpoints. Exits with the hub's code if the hub fails, else 1 if a
# worker did.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${MT_BUILD_DIR:-$root/build}"
workers=3
out="$build/local-cluster"
hub_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --workers) workers="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --) shift; hub_args=("$@"); break ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "local-cluster.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
for bin in "$build/hub/mthub" "$build/worker/mtworker"; do
  [ -x "$bin" ] || { echo "local-cluster.sh: $bin not built (run deploy/build.sh, or set MT_BUILD_DIR to the build directory that has it; now ${MT_BUILD_DIR:-unset, so $root/build})" >&2; exit 1; }
done
mkdir -p "$out"
rm -f "$out/port" "$out"/*.json

source "$root/deploy/cluster-trust.sh"
worker_trust_flags --tls-ca "$out/state/hub-cert.pem" -- "${hub_args[@]}"
"$build/hub/mthub" --workers "$workers" --bind 127.0.0.1 --port 0 --port-file "$out/port" \
  --state-dir "$out/state" --report "$out/hub.json" "${hub_args[@]}" \
  > >(trap '' INT TERM; exec tee "$out/hub.log") 2>&1 &
# mthub itself (not a pipeline's tee), so a signal to this script reaches it;
# tee ignores Ctrl-C and copies the hub's last words until the hub closes it.
hub_pid=$!
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; }
trap 'kill -INT $hub_pid 2>/dev/null || true' INT TERM
trap cleanup EXIT

# A hub that stops before it listens (a mistyped flag: 2) ends the script at
# once, with its code.
hub_status() {
  local code=0
  wait "$hub_pid" || code=$?
  [ "$code" -eq 0 ] || echo "local-cluster.sh: the hub exited with $code; see $out/hub.log" >&2
  exit "$code"
}
for _ in $(seq 1 200); do
  [ -s "$out/port" ] && break
  kill -0 "$hub_pid" 2>/dev/null || hub_status
  sleep 0.1
done
[ -s "$out/port" ] || { echo "local-cluster.sh: the hub did not start; see $out/hub.log" >&2; exit 1; }
port=$(cat "$out/port")
for i in $(seq 0 $((workers - 1))); do
  "$build/worker/mtworker" --hub "127.0.0.1:$port" --name "worker$i" --threads 1 "${trust[@]}" \
    --report "$out/worker$i.json" >"$out/worker$i.log" 2>&1 &
  pids+=($!)
done

# The INT/TERM trap interrupts `wait` while the hub still shuts down.
status=0
while :; do
  status=0
  wait "$hub_pid" || status=$?
  kill -0 "$hub_pid" 2>/dev/null || break
done
# A failed hub leaves its workers retrying: its code is the run's.
if [ "$status" -ne 0 ]; then
  kill "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
else
  for p in "${pids[@]}"; do wait "$p" || status=1; done
fi
if [ -f "$out/hub.json" ]; then
  python3 - "$out/hub.json" <<'PY' || grep -E '"(test_accuracy|samples_per_second)"' "$out/hub.json"
import json, sys
r = json.load(open(sys.argv[1]))
print(f"final test accuracy {r['test_accuracy']:.4f} after {r['steps']} steps; "
      f"{r['samples_per_second']:.0f} samples/s over {len(r['workers'])} workers")
PY
fi
exit $status
