#!/usr/bin/env bash
# Runs a hub and N workers on this machine, each in its own network namespace,
# behind shaped links, to emulate phones training over slow Wi-Fi. The
# defaults (32 Mbit/s, 5 ms, 1% loss) are those of a published test that
# trained across three phones on 32 Mbit/s Wi-Fi; on loopback the same run
# moves its gradients in microseconds and hides what the network costs.
#
#   deploy/netem-cluster.sh [--workers 3] [--medium shared|separate] [--rate 32mbit]
#                           [--delay 5ms] [--loss 1%] [--shaper netem|tbf]
#                           [--worker-args I "FLAGS"]... [--timeout 3600] [--out DIR] [--keep]
#                           [--baseline] [--baseline-rate 10gbit] [-- extra mthub flags]
#   deploy/netem-cluster.sh --cleanup      # remove namespaces left by a crashed run
#   MT_WORKER_ARGS="--device auto" deploy/netem-cluster.sh ...   # extra flags, every mtworker
#   deploy/netem-cluster.sh --worker-args 1 "--slowdown 5" ...    # extra flags, worker 1 only
#
# Namespace mtnetem<PID>-hub holds the hub on 10.77.0.1 (on its loopback);
# worker i runs in mtnetem<PID>-w<i>. The shaped links are shaped at both
# ends with tc netem (rate, delay, loss), so each direction is limited to
# --rate and the round trip is twice --delay.
# --medium shared (the default) is one Wi-Fi network: every worker's eth0
# (10.77.1.<i+2>) is a port of a bridge in mtnetem<PID>-ap (the access
# point), and one shaped link joins the bridge to the hub (ap0 there,
# 10.77.1.1), so --rate is the total of all workers' traffic in each
# direction, as on a medium the phones share.
# --medium separate gives each worker a shaped link of its own straight to
# the hub (w<i> there, eth0 here; 10.77.<i+1>.0/24): --rate per worker. With --loss above 0, segmentation offload is off on the
# links (gso_max_segs 1) so loss hits single packets, not 64 KB
# super-packets; that costs CPU per packet (on a 2-core VM about 30 ms of a
# 2-worker step at 1000mbit, hidden at 32mbit). Nothing outside these
# namespaces (the host's interfaces and routes) is touched.
# --shaper tbf is for kernels without netem (CONFIG_NET_SCH_NETEM): rate by
# tbf and loss by a classic-BPF random drop on clsact egress; it cannot
# delay, so it requires --delay 0ms.
#
# "Did more phones help?": --baseline first runs the same training with one
# worker alone (worker 0's --worker-args) on a fast link of its own
# (--baseline-rate, no delay or loss), as tests/bench/wifi.py's "alone" run,
# its logs in $OUT/baseline; the result then prints beside it: the time to
# mthub's --target-accuracy when one is given (the report's
# seconds_to_target), else samples/s and training time.
# The hub's dashboard (mthub --http-port, on by default) listens inside the
# hub's namespace; deploy/ns-forward.py forwards a port of this machine's
# 127.0.0.1 to it (the same port when free), so the address printed opens
# in a browser here (also written to $OUT/dashboard).
#
# Prints the hub's result and the bytes that crossed the hub's ends of the
# links (both directions, retransmissions included, join and final traffic
# included; when packets reach the veth unsegmented, as at high rates with
# no loss, their per-segment headers are not counted, ~5% less), and writes
# $OUT/netem.json (step_ms = 1000 * train_seconds / steps, bytes_per_step =
# (hub_tx_bytes + hub_rx_bytes) / steps). Logs and reports go to --out
# (default $MT_BUILD_DIR/netem-cluster). Namespaces and processes are
# removed on exit, Ctrl-C and errors unless --keep (then: --cleanup).
# Needs root (network namespaces, tc), iproute2 and python3. Exit status:
# the hub's (124 when --timeout ran out).
set -euo pipefail
cd "$(dirname "$0")/.."
me=netem-cluster.sh
build="${MT_BUILD_DIR:-build}"
workers=3
medium=shared
rate=32mbit
delay=5ms
loss=1%
shaper=netem
timeout=3600
out=""
keep=0
cleanup_only=0
baseline=0
baseline_rate=10gbit
hub_args=()
read -r -a worker_args <<<"${MT_WORKER_ARGS:-}"
declare -A one_worker_args=()  # worker index -> its own extra flags
prefix=mtnetem
tag="$prefix$$"
hub_ns="$tag-hub"
hub_ip=10.77.0.1

die() { echo "$me: $*" >&2; exit 1; }
bad_usage() { echo "$me: $* (see --help)" >&2; exit 2; }  # command-line mistakes exit 2
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --workers) workers="$2"; shift 2 ;;
    --medium) medium="$2"; shift 2 ;;
    --worker-args)
      [ $# -ge 3 ] || { echo "$me: --worker-args takes a worker index and its flags" >&2; exit 2; }
      case "$2" in ''|*[!0-9]*) echo "$me: --worker-args wants a worker index, not '$2'" >&2; exit 2 ;; esac
      one_worker_args[$2]="${one_worker_args[$2]:-} $3"; shift 3 ;;
    --rate) rate="$2"; shift 2 ;;
    --delay) delay="$2"; shift 2 ;;
    --loss) loss="$2"; shift 2 ;;
    --shaper) shaper="$2"; shift 2 ;;
    --timeout) timeout="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    --baseline) baseline=1; shift ;;
    --baseline-rate) baseline_rate="$2"; shift 2 ;;
    --cleanup) cleanup_only=1; shift ;;
    --) shift; hub_args=("$@"); break ;;
    -h|--help) usage; exit 0 ;;
    *) echo "$me: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
out="${out:-$build/netem-cluster}"

[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces and tc); run it with sudo"
for tool in ip tc python3; do
  command -v "$tool" >/dev/null || die "'$tool' not found (ip and tc come with iproute2)"
done

# Namespaces from runs whose script is gone (crashed, killed, or --keep).
remove_leftovers() {
  local ns pid found=0
  for ns in $(ip netns list 2>/dev/null | awk '{ print $1 }' | grep -E "^${prefix}[0-9]+-" || true); do
    pid="${ns#"$prefix"}"; pid="${pid%%-*}"
    if [ "$pid" != "$$" ] && kill -0 "$pid" 2>/dev/null; then
      echo "$me: leaving $ns: its run (pid $pid) is still going" >&2
      continue
    fi
    # shellcheck disable=SC2046  # one pid per word
    kill -KILL $(ip netns pids "$ns" 2>/dev/null) 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null && { echo "$me: removed $ns"; found=1; }
  done
  [ "$found" -eq 1 ] || echo "$me: nothing to clean up"
}
if [ "$cleanup_only" -eq 1 ]; then remove_leftovers; exit 0; fi

case "$workers" in ''|*[!0-9]*) bad_usage "--workers wants a number, not '$workers'" ;; esac
if [ "$workers" -lt 1 ] || [ "$workers" -gt 200 ]; then bad_usage "--workers must be 1..200"; fi
case "$timeout" in ''|*[!0-9]*) bad_usage "--timeout wants seconds, not '$timeout'" ;; esac
case "$medium" in shared|separate) ;; *) bad_usage "--medium is shared or separate (got '$medium')" ;; esac
for i in "${!one_worker_args[@]}"; do
  [ "$i" -lt "$workers" ] || bad_usage "--worker-args $i: there are workers 0..$((workers - 1))"
done
[[ "$rate" =~ ^[0-9]+(\.[0-9]+)?([kmgt]?bit|[kmgt]?bps)$ ]] || bad_usage "--rate like 32mbit, 500kbit, 1gbit (got '$rate')"
[[ "$baseline_rate" =~ ^[0-9]+(\.[0-9]+)?([kmgt]?bit|[kmgt]?bps)$ ]] || bad_usage "--baseline-rate like 10gbit (got '$baseline_rate')"
[[ "$delay" =~ ^[0-9]+(\.[0-9]+)?(us|ms|s)$ ]] || bad_usage "--delay like 5ms (got '$delay')"
[[ "$loss" =~ ^[0-9]+(\.[0-9]+)?%$ ]] || bad_usage "--loss like 1% (got '$loss')"
for bin in "$build/hub/mthub" "$build/worker/mtworker"; do
  [ -x "$bin" ] || die "$bin not built (run deploy/build.sh, or set MT_BUILD_DIR)"
done
stale=$(ip netns list 2>/dev/null | awk '{ print $1 }' | grep -cE "^${prefix}[0-9]+-" || true)
[ "$stale" -eq 0 ] || echo "$me: note: $stale namespace(s) from other runs exist (--cleanup removes dead ones)" >&2

worker_ns() { echo "$tag-w$1"; }
in_ns() { local ns="$1"; shift; ip netns exec "$ns" "$@"; }

# Shaping for one end of a link: netem, or tbf plus a random drop.
shape() {
  local ns="$1" dev="$2"
  if [ "$shaper" = netem ]; then
    in_ns "$ns" tc qdisc add dev "$dev" root netem rate "$rate" delay "$delay" loss "$loss" limit 1000
  else
    in_ns "$ns" tc qdisc add dev "$dev" root tbf rate "$rate" burst "$tbf_burst" limit 1514000
    if [ "$drop_threshold" -gt 0 ]; then
      # ld random; if random >= threshold pass (-1: TC_ACT_UNSPEC) else drop (2: TC_ACT_SHOT)
      in_ns "$ns" tc qdisc add dev "$dev" clsact
      in_ns "$ns" tc filter add dev "$dev" egress bpf da \
        bytecode "4,32 0 0 4294963256,53 1 0 $drop_threshold,6 0 0 2,6 0 0 4294967295"
    fi
  fi
}

# Check that namespaces and the shaper work before building anything.
probe_ns="$tag-probe"
probe() {
  ip netns add "$probe_ns" 2>/dev/null || die "cannot create network namespaces (ip netns add failed)"
  local err
  if [ "$shaper" = netem ]; then
    if command -v modprobe >/dev/null; then modprobe -q sch_netem 2>/dev/null || true; fi
    if ! err=$(in_ns "$probe_ns" tc qdisc add dev lo root netem delay 1ms 2>&1); then
      ip netns del "$probe_ns"
      die "tc netem is not available in this kernel ($(uname -r)): '$err'. It needs" \
        "CONFIG_NET_SCH_NETEM (modprobe sch_netem). Without it, --shaper tbf --delay 0ms shapes rate and loss only."
    fi
  else
    if ! err=$( { in_ns "$probe_ns" tc qdisc add dev lo root tbf rate 1mbit burst 16kb limit 100000 &&
                  in_ns "$probe_ns" tc qdisc add dev lo clsact &&
                  in_ns "$probe_ns" tc filter add dev lo egress bpf da bytecode "1,6 0 0 4294967295"; } 2>&1); then
      ip netns del "$probe_ns"
      die "--shaper tbf needs the tbf qdisc, clsact and cls_bpf: '$err'"
    fi
  fi
  ip netns del "$probe_ns"
}

if [ "$shaper" = tbf ]; then
  [[ "$delay" =~ ^0+(\.0+)?(us|ms|s)$ ]] || bad_usage "--shaper tbf cannot add delay; pass --delay 0ms (or use netem)"
  # The bucket holds 4 ms of traffic, at least 10 full frames.
  tbf_burst=$(awk -v r="$rate" 'BEGIN {
    match(r, /^[0-9.]+/); n = substr(r, 1, RLENGTH) + 0; u = tolower(substr(r, RLENGTH + 1)); m = 1
    if (u ~ /^k/) m = 1e3; else if (u ~ /^m/) m = 1e6; else if (u ~ /^g/) m = 1e9; else if (u ~ /^t/) m = 1e12
    bytes = n * m; if (u ~ /bit$/) bytes /= 8
    b = bytes * 0.004; if (b < 15140) b = 15140; printf "%.0f", b }')
  drop_threshold=$(awk -v l="${loss%\%}" 'BEGIN { printf "%.0f", l / 100 * 4294967296 }')
  [ "$drop_threshold" -lt 4294967296 ] || bad_usage "--loss must be below 100%"
elif [ "$shaper" != netem ]; then
  bad_usage "--shaper is netem or tbf"
fi

hub_pid=""
forward_pid=""
pids=()
made_ns=()
stopping=0
# shellcheck disable=SC2317  # called by the traps
cleanup() {
  set +e
  trap - INT TERM
  local p deadline=$((SECONDS + 5))
  [ -z "$forward_pid" ] || kill -TERM "$forward_pid" 2>/dev/null
  for p in $hub_pid "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in $hub_pid "${pids[@]}"; do
    while kill -0 "$p" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
    kill -KILL "$p" 2>/dev/null
  done
  local ns
  for ns in "${made_ns[@]}"; do
    # shellcheck disable=SC2046  # one pid per word
    kill -KILL $(ip netns pids "$ns" 2>/dev/null) 2>/dev/null
  done
  if [ "$keep" -eq 1 ] && [ "${#made_ns[@]}" -gt 0 ]; then
    echo "$me: kept namespaces ${made_ns[*]}; e.g. ip netns exec $hub_ns tc -s qdisc;" \
      "remove them with $0 --cleanup" >&2
  else
    for ns in "${made_ns[@]}"; do ip netns del "$ns" 2>/dev/null; done
  fi
  ip netns del "$probe_ns" 2>/dev/null
}
# shellcheck disable=SC2317  # called by the traps
on_signal() {
  # Before the hub runs: just leave. Once it runs: ask it to stop (it says
  # goodbye to the workers and writes its report), and let the wait below
  # finish within its grace period.
  [ -n "$hub_pid" ] || exit 130
  stopping=1
  kill -TERM "$hub_pid" 2>/dev/null || true
}
trap cleanup EXIT
trap on_signal INT TERM

probe

# Topology.
gso=()
[[ "$loss" =~ ^0+(\.0+)?%$ ]] || gso=(gso_max_segs 1)
new_ns() {
  made_ns+=("$1")
  ip netns add "$1"
  in_ns "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 2>/dev/null || true
  ip -n "$1" link set lo up
}
new_ns "$hub_ns"
ip -n "$hub_ns" addr add "$hub_ip/32" dev lo
if [ "$medium" = separate ]; then
  hub_links=()
  for i in $(seq 0 $((workers - 1))); do
    ns=$(worker_ns "$i")
    new_ns "$ns"
    ip -n "$hub_ns" link add "w$i" "${gso[@]}" type veth peer name eth0 netns "$ns" "${gso[@]}"
    net="10.77.$((i + 1))"
    ip -n "$hub_ns" addr add "$net.1/24" dev "w$i"
    ip -n "$ns" addr add "$net.2/24" dev eth0
    ip -n "$hub_ns" link set "w$i" up
    ip -n "$ns" link set eth0 up
    ip -n "$ns" route add "$hub_ip/32" via "$net.1"
    shape "$hub_ns" "w$i"
    shape "$ns" eth0
    hub_links+=("w$i")
  done
else
  # The access point: a bridge whose uplink to the hub is the one shaped
  # link, shaped on the hub's end (downloads) and the bridge's (uploads).
  ap_ns="$tag-ap"
  new_ns "$ap_ns"
  ip -n "$ap_ns" link add br0 type bridge
  ip -n "$ap_ns" link set br0 up
  ip -n "$hub_ns" link add ap0 "${gso[@]}" type veth peer name uplink netns "$ap_ns" "${gso[@]}"
  ip -n "$hub_ns" addr add 10.77.1.1/24 dev ap0
  ip -n "$hub_ns" link set ap0 up
  ip -n "$ap_ns" link set uplink master br0 up
  shape "$hub_ns" ap0
  shape "$ap_ns" uplink
  for i in $(seq 0 $((workers - 1))); do
    ns=$(worker_ns "$i")
    new_ns "$ns"
    ip -n "$ap_ns" link add "w$i" "${gso[@]}" type veth peer name eth0 netns "$ns" "${gso[@]}"
    ip -n "$ap_ns" link set "w$i" master br0 up
    ip -n "$ns" addr add "10.77.1.$((i + 2))/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" route add "$hub_ip/32" via 10.77.1.1
  done
  hub_links=(ap0)
fi

counters() {  # total rx and tx bytes of the hub's ends of the links
  local link rx=0 tx=0 r t
  for link in "${hub_links[@]}"; do
    r=$(in_ns "$hub_ns" cat "/sys/class/net/$link/statistics/rx_bytes")
    t=$(in_ns "$hub_ns" cat "/sys/class/net/$link/statistics/tx_bytes")
    rx=$((rx + r)); tx=$((tx + t))
  done
  echo "$rx $tx"
}

mkdir -p "$out"
rm -f "$out/port" "$out/dashboard" "$out"/*.json "$out"/*.log
rm -rf "$out/baseline"
if [ "$baseline" -eq 1 ]; then
  echo "$me: baseline: one worker alone on a link of $baseline_rate; logs in $out/baseline"
  base=(--workers 1 --medium separate --rate "$baseline_rate" --delay 0ms --loss 0% --shaper "$shaper"
        --timeout "$timeout" --out "$out/baseline")
  [ -z "${one_worker_args[0]:-}" ] || base+=(--worker-args 0 "${one_worker_args[0]}")
  base_hub_args=()  # the hub's flags but --linger: the baseline ends with its run
  skip=0
  for a in "${hub_args[@]}"; do
    if [ "$skip" -eq 1 ]; then skip=0; continue; fi
    case "$a" in --linger) skip=1; continue ;; --linger=*) continue ;; esac
    base_hub_args+=("$a")
  done
  MT_NETEM_NO_FORWARD=1 bash "$0" "${base[@]}" -- "${base_hub_args[@]}" >"$out/baseline.log" 2>&1 ||
    die "the baseline run failed (exit $?); see $out/baseline.log"
fi
read -r rx0 tx0 < <(counters)
if [ "$medium" = shared ]; then
  echo "$me: $workers worker(s) sharing one link of $rate, $delay, $loss loss each way ($shaper); logs in $out"
else
  echo "$me: $workers worker(s), each on its own link of $rate, $delay, $loss loss each way ($shaper); logs in $out"
fi

# ip netns exec execs the program, so $! is the hub's (or worker's) pid.
# TLS as on a real network: the hub keeps its certificate in $out/state and
# the workers remember it on first use there (--insecure among the mthub
# flags: plaintext for everyone).
source deploy/cluster-trust.sh
worker_trust_flags --state-dir "$out/state" -- "${hub_args[@]}"
ip netns exec "$hub_ns" "$build/hub/mthub" --workers "$workers" --bind "$hub_ip" --port 0 --port-file "$out/port" \
  --state-dir "$out/state" --report "$out/hub.json" "${hub_args[@]}" > >(tee -i "$out/hub.log") 2>&1 &
hub_pid=$!

for _ in $(seq 1 200); do
  [ -s "$out/port" ] && break
  kill -0 "$hub_pid" 2>/dev/null || break
  sleep 0.1 || true
done
[ -s "$out/port" ] || die "the hub did not start; see $out/hub.log"
port=$(cat "$out/port")
for i in $(seq 0 $((workers - 1))); do
  read -r -a own_args <<<"${one_worker_args[$i]:-}"
  ip netns exec "$(worker_ns "$i")" "$build/worker/mtworker" --hub "$hub_ip:$port" --name "worker$i" --threads 1 "${trust[@]}" \
    --report "$out/worker$i.json" "${worker_args[@]}" "${own_args[@]}" >"$out/worker$i.log" 2>&1 &
  pids+=($!)
done

# The dashboard, from this machine: the address the hub logs, forwarded.
forward_dashboard() {
  local line url _
  for _ in $(seq 1 50); do
    line=$(grep -o 'dashboard: https\?://[^ ]*' "$out/hub.log" 2>/dev/null | head -n 1) && break
    kill -0 "$hub_pid" 2>/dev/null || return 0
    sleep 0.1 || true
  done
  [ -n "$line" ] || return 0
  url=${line#dashboard: }
  [[ "$url" =~ ^(https?)://(\[[^]]*\]|[^:/]+):([0-9]+)(/.*)?$ ]] || return 0
  local scheme="${BASH_REMATCH[1]}" host="${BASH_REMATCH[2]}" hport="${BASH_REMATCH[3]}" rest="${BASH_REMATCH[4]}"
  host=${host#[}; host=${host%]}
  python3 deploy/ns-forward.py "$hub_ns" "$host" "$hport" "$hport" >"$out/forward.port" 2>"$out/forward.log" &
  forward_pid=$!
  for _ in $(seq 1 50); do
    [ -s "$out/forward.port" ] && break
    sleep 0.1 || true
  done
  [ -s "$out/forward.port" ] || { echo "$me: could not forward the dashboard; see $out/forward.log" >&2; return 0; }
  echo "$scheme://127.0.0.1:$(head -n 1 "$out/forward.port")${rest:-/}" >"$out/dashboard"
  echo "$me: dashboard from this machine: $(cat "$out/dashboard") (forwarded into $hub_ns)"
}
[ -n "${MT_NETEM_NO_FORWARD:-}" ] || forward_dashboard

# Wait for the hub: at most --timeout, and at most 30 s once asked to stop.
deadline=$((SECONDS + timeout))
stop_deadline=""
timed_out=0
while kill -0 "$hub_pid" 2>/dev/null; do
  if [ -z "$stop_deadline" ]; then
    if [ "$stopping" -eq 0 ] && [ "$SECONDS" -ge "$deadline" ]; then
      echo "$me: the run passed --timeout $timeout s; stopping the hub" >&2
      timed_out=1; stopping=1
      kill -TERM "$hub_pid" 2>/dev/null || true
    fi
    [ "$stopping" -eq 0 ] || stop_deadline=$((SECONDS + 30))
  elif [ "$SECONDS" -ge "$stop_deadline" ]; then
    echo "$me: the hub did not stop within 30 s; killing it" >&2
    kill -KILL "$hub_pid" 2>/dev/null || true
    break
  fi
  sleep 0.2 || true
done
status=0
wait "$hub_pid" || status=$?
[ "$timed_out" -eq 0 ] || status=124
# Workers leave once the hub says stop; give them a moment, then the EXIT trap ends them.
wdeadline=$((SECONDS + 15))
for p in "${pids[@]}"; do
  while kill -0 "$p" 2>/dev/null && [ "$SECONDS" -lt "$wdeadline" ]; do sleep 0.1 || true; done
done
read -r rx1 tx1 < <(counters)

python3 - "$out" "$rate" "$delay" "$loss" "$shaper" "$medium" "$workers" "$((rx1 - rx0))" "$((tx1 - tx0))" <<'PY' || true
import json, os, sys
out, rate, delay, loss, shaper, medium = sys.argv[1:7]
workers, rx, tx = (int(v) for v in sys.argv[7:10])
path = os.path.join(out, "hub.json")
hub = json.load(open(path)) if os.path.exists(path) else None
steps = hub["steps"] if hub else None
summary = {"medium": medium, "rate": rate, "delay": delay, "loss": loss, "shaper": shaper, "workers": workers,
           "hub_tx_bytes": tx, "hub_rx_bytes": rx, "steps": steps,
           "bytes_per_step": (tx + rx) / steps if steps else None,
           "step_ms": 1000 * hub["train_seconds"] / steps if steps else None,
           "test_accuracy": hub["test_accuracy"] if hub else None,
           "samples_per_second": hub["samples_per_second"] if hub else None,
           "train_seconds": hub["train_seconds"] if hub else None,
           "target_accuracy": hub.get("target_accuracy", 0) if hub else None,
           "seconds_to_target": hub.get("seconds_to_target", -1) if hub else None,
           "step_to_target": hub.get("step_to_target", -1) if hub else None,
           "hub_report": os.path.abspath(path) if hub else None}
# --baseline: the same training by one worker alone on a fast link.
base_path = os.path.join(out, "baseline", "hub.json")
base = json.load(open(base_path)) if os.path.exists(base_path) else None
if base:
    summary["baseline"] = {k: base.get(k) for k in ("steps", "samples_per_second", "train_seconds",
                                                    "test_accuracy", "seconds_to_target", "step_to_target")}
json.dump(summary, open(os.path.join(out, "netem.json"), "w"), indent=2)
def to_target(r):
    s = r.get("seconds_to_target", -1)
    return f"{s:.1f} s (step {r.get('step_to_target', -1)})" if s is not None and s >= 0 else "not reached"
if hub:
    print(f"test accuracy {hub['test_accuracy']:.4f} after {steps} steps; {hub['samples_per_second']:.0f} samples/s, "
          f"{hub['train_seconds']:.2f} s training, {summary['step_ms'] or 0:.1f} ms/step")
    target = hub.get("target_accuracy", 0)
    if target > 0:
        print(f"time to target accuracy {target:g}: {to_target(hub)} with {workers} worker(s)")
    if base:
        if target > 0:
            line = f"one worker alone on a fast link: {to_target(base)}"
            ours, theirs = hub.get("seconds_to_target", -1), base.get("seconds_to_target", -1)
            if ours > 0 and theirs > 0:
                line += f"; {workers} worker(s) took {ours / theirs:.2f}x its time ({theirs / ours:.2f}x as fast)"
        else:
            line = (f"one worker alone on a fast link: {base['samples_per_second']:.0f} samples/s, "
                    f"{base['train_seconds']:.2f} s training for {base['steps']} steps")
            if base["samples_per_second"] > 0:
                line += f"; {workers} worker(s): {hub['samples_per_second'] / base['samples_per_second']:.2f}x its samples/s"
        print(line)
else:
    print("no hub report (the hub failed; see hub.log)")
per = f", {(tx + rx) / steps / 1e3:.1f} KB/step" if steps else ""
print(f"hub links: sent {tx / 1e6:.2f} MB, received {rx / 1e6:.2f} MB{per} over {workers} worker(s); "
      f"summary in {os.path.join(out, 'netem.json')}")
PY
exit "$status"
