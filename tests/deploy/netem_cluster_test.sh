#!/usr/bin/env bash
# ctest Deploy.NetemClusterSharedMedium: deploy/netem-cluster.sh builds its
# namespaces, trains over one shared shaped link and cleans up.
#   tests/deploy/netem_cluster_test.sh BUILD_DIR
# Checks, from the script's netem.json and the hub's report (never its log
# wording): every step of the run done by both workers, all the traffic on
# the one link the medium is, worker 1's own flags applied (a memory budget
# that caps its batch, which the hub reports), and no namespace left behind;
# then that --sync-every auto and --compress auto (the defaults) take local
# steps and a stronger encoding behind a shaped link, where an exchange
# costs far more than 20 ms; then --baseline's times to target and the
# dashboard forwarded to this machine.
# Skipped (77) without root or network namespaces; uses the tbf shaper,
# which every kernel here has (netem is not built into CI's).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$(cd "$1" && pwd)"
[ "$(id -u)" -eq 0 ] || { echo "skipped: needs root"; exit 77; }
probe="mtnetemtest$$"
ip netns add "$probe" 2>/dev/null || { echo "skipped: cannot create network namespaces"; exit 77; }
ip netns del "$probe"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

MT_BUILD_DIR="$build" timeout 300 bash "$root/deploy/netem-cluster.sh" --workers 2 --medium shared \
  --shaper tbf --delay 0ms --loss 1% --rate 100mbit --worker-args 1 "--memory-budget 4M" \
  --out "$out" -- --steps 12 --global-batch 128 --sync-every 1 --compress none --log-every 60 \
  >"$out/run.log" 2>&1 ||
  { cat "$out/run.log"; echo "FAIL: netem-cluster.sh exited $?"; exit 1; }

python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
net = json.load(open(f"{out}/netem.json"))
hub = json.load(open(f"{out}/hub.json"))
fails = []
def check(ok, what):
    if not ok: fails.append(what)
check(net["medium"] == "shared", f"medium {net['medium']}")
check(hub["steps"] == 12, f"steps {hub['steps']}")
workers = {w["name"]: w for w in hub["workers"]}
check(set(workers) == {"worker0", "worker1"}, f"workers {sorted(workers)}")
check(all(w["steps"] == 12 for w in workers.values()), "a worker missed steps")
# LeNet-5's gradient is ~247 KB each way per worker per step, all of it on ap0.
check(net["hub_rx_bytes"] > 2 * 12 * 200e3, f"hub received {net['hub_rx_bytes']} bytes")
check(net["hub_tx_bytes"] > 2 * 12 * 200e3, f"hub sent {net['hub_tx_bytes']} bytes")
check(workers["worker1"]["max_batch"] < workers["worker0"]["max_batch"],
      f"worker1's --memory-budget did not cap its batch: {workers['worker1']['max_batch']}")
if fails:
    print("FAIL: " + "; ".join(fails))
    sys.exit(1)
PY
auto="$out/auto"
MT_BUILD_DIR="$build" timeout 300 bash "$root/deploy/netem-cluster.sh" --workers 2 --medium shared \
  --shaper tbf --delay 0ms --loss 0% --rate 16mbit --out "$auto" -- --steps 80 --log-every 60 \
  >"$out/auto.log" 2>&1 || { cat "$out/auto.log"; echo "FAIL: netem-cluster.sh (auto) exited $?"; exit 1; }
python3 - "$auto/hub.json" <<'PY'
import json, sys
hub = json.load(open(sys.argv[1]))
changes = hub["sync_changes"]
if hub["steps"] != 80 or hub["sync_every"] != "auto" or not changes or changes[0]["from"] != 1 \
        or hub["final_sync_every"] < 4 or changes[0]["exchange_ms"] < 20:  # Adam's ceiling: 4
    print(f"FAIL: auto behind 16 Mbit/s: steps {hub['steps']}, final H {hub['final_sync_every']}, "
          f"changes {changes}")
    sys.exit(1)
encodings = hub["compression_changes"]
if hub["compression"] != "auto" or not encodings or encodings[0]["from"] != "none" \
        or encodings[0]["exchange_ms"] < 20 or hub["final_compression"] == "none":
    print(f"FAIL: --compress auto behind 16 Mbit/s: final {hub['final_compression']}, "
          f"changes {encodings}")
    sys.exit(1)
print(f"auto: H {hub['final_sync_every']}, encoding {hub['final_compression']}, "
      f"changes {[(c['step'], c['from'], c['to'], round(c['exchange_ms'])) for c in encodings]}")
PY
# "Did more phones help?": --baseline runs one worker alone on a fast link
# first, and both times to --target-accuracy land in netem.json; the
# dashboard, inside the hub's namespace, answers at the address written for
# this machine while the hub lingers.
base="$out/baseline-run"
MT_BUILD_DIR="$build" timeout 300 bash "$root/deploy/netem-cluster.sh" --workers 2 --medium shared \
  --shaper tbf --delay 0ms --loss 0% --rate 100mbit --baseline --out "$base" -- --steps 30 \
  --global-batch 128 --target-accuracy 0.01 --eval-every 10 --log-every 60 --linger 3 \
  >"$out/baseline.log" 2>&1 &
run=$!
status=""
for _ in $(seq 1 2400); do
  if [ -s "$base/dashboard" ]; then
    url=$(sed 's/?.*//' "$base/dashboard")
    status=$(curl -sk --max-time 5 "${url}api/status" || true)
    [ -n "$status" ] && break
  fi
  kill -0 "$run" 2>/dev/null || break
  sleep 0.1
done
wait "$run" || { cat "$out/baseline.log"; echo "FAIL: netem-cluster.sh --baseline exited $?"; exit 1; }
python3 - "$base/netem.json" "$status" <<'PY'
import json, sys
net = json.load(open(sys.argv[1]))
fails = []
try:
    state = json.loads(sys.argv[2]).get("state")
except ValueError:
    state = None
if state not in ("waiting", "training", "finished"):
    fails.append(f"the forwarded dashboard did not answer: {sys.argv[2][:200]!r}")
base = net.get("baseline") or {}
for name, r in (("2 workers", net), ("the baseline", base)):
    if not r.get("steps") or r.get("seconds_to_target", -1) is None or r.get("seconds_to_target", -1) < 0:
        fails.append(f"{name}: no time to target in {r}")
if fails:
    print("FAIL: " + "; ".join(fails))
    sys.exit(1)
print(f"to target: {net['seconds_to_target']:.2f} s with 2 workers, {base['seconds_to_target']:.2f} s alone")
PY
# Namespaces whose script has ended (another run on this machine, still
# going, keeps its own).
left=0
for ns in $(ip netns list | awk '{ print $1 }' | grep '^mtnetem[0-9]' || true); do
  pid=${ns#mtnetem}; pid=${pid%%-*}
  kill -0 "$pid" 2>/dev/null || left=$((left + 1))
done
[ "$left" -eq 0 ] || { echo "FAIL: $left namespace(s) left behind"; exit 1; }
echo "ok: 2 workers over one shared shaped link; auto took local steps and an encoding behind it; --baseline timed both to target; the dashboard answered from here"
