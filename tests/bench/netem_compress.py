#!/usr/bin/python3
"""Gradient compression over an emulated slow Wi-Fi link, one run per mode.

mt: deploy/netem-cluster.sh (hub and workers in network namespaces, links
shaped at both ends; default one 32mbit medium shared by all workers, 5 ms,
1% loss each way; --medium separate gives each worker its own link) with
mthub --compress MODE --steps S, LeNet-5 on Fashion-MNIST, 3 workers x batch
64. The modes alternate, --repeat times, and the medians are compared: step
time (train seconds / steps), bytes per step that crossed the hub's ends of
the links (both directions, TCP/IP headers and retransmissions included,
join traffic spread over the steps), their ratio to --compress none, and
test accuracy. Needs root (see deploy/netem-cluster.sh). A mode the mthub in
--build does not know fails before anything runs; without --compress on
mthub, `--modes none` still runs (mthub's default is no compression).

  tests/bench/netem_compress.py [--modes none,fp16,int8] [--repeat 3] [--steps 200] [--workers 3]
      [--medium shared|separate] [--rate 32mbit] [--delay 5ms] [--loss 1%] [--shaper netem|tbf] [--build build] [--json out.json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODES = ("none", "fp16", "int8")


def hub_help(build):
    hub = os.path.join(build, "hub", "mthub")
    if not os.access(hub, os.X_OK):
        sys.exit(f"{hub} not built (pass --build)")
    run = subprocess.run([hub, "--help"], capture_output=True, text=True)
    return run.stdout + run.stderr


def run_mode(a, mode, pass_flag):
    with tempfile.TemporaryDirectory() as out:
        cmd = ["bash", os.path.join(ROOT, "deploy", "netem-cluster.sh"), "--workers", str(a.workers),
               "--medium", a.medium, "--rate", a.rate, "--delay", a.delay, "--loss", a.loss, "--shaper", a.shaper, "--out", out, "--",
               "--steps", str(a.steps), "--log-every", "60"]
        if pass_flag:
            cmd += ["--compress", mode]
        if a.per_step:
            cmd += ["--sync-every", "1"]  # what compression does to every step's exchange
        env = dict(os.environ, MT_BUILD_DIR=a.build)
        run = subprocess.run(cmd, capture_output=True, text=True, env=env)
        summary = os.path.join(out, "netem.json")
        if run.returncode != 0 or not os.path.exists(summary):
            log = os.path.join(out, "hub.log")
            hub_log = open(log).read()[-1500:] if os.path.exists(log) else ""
            sys.exit(f"netem-cluster.sh failed for --compress {mode} (exit {run.returncode}):\n"
                     f"{(run.stdout + run.stderr)[-1500:]}\n--- hub.log:\n{hub_log}")
        s = json.load(open(summary))
    return {"mode": mode, "step_ms": s["step_ms"], "bytes_per_step": s["bytes_per_step"],
            "hub_tx_bytes": s["hub_tx_bytes"], "hub_rx_bytes": s["hub_rx_bytes"], "steps": s["steps"],
            "test_acc": s["test_accuracy"], "samples_per_s": s["samples_per_second"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--modes", default=",".join(MODES), help="comma-separated subset of none,fp16,int8")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workers", type=int, default=3)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--medium", default="shared", choices=["shared", "separate"],
                    help="one link all workers share (Wi-Fi) or a link each")
    ap.add_argument("--rate", default="32mbit")
    ap.add_argument("--delay", default="5ms")
    ap.add_argument("--loss", default="1%")
    ap.add_argument("--shaper", default="netem", choices=("netem", "tbf"))
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--json")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    modes = [m.strip() for m in a.modes.split(",") if m.strip()]
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        sys.exit(f"--modes takes a comma-separated subset of {','.join(MODES)} (got {a.modes!r})")
    help_text = hub_help(a.build)
    knows = "--compress" in help_text
    # Builds with --sync-every auto would take local steps over the slow
    # link; this bench measures the per-step exchange.
    a.per_step = "--sync-every" in help_text
    if not knows and any(m != "none" for m in modes):
        sys.exit(f"{a.build}/hub/mthub has no --compress flag, so it cannot run "
                 f"{','.join(m for m in modes if m != 'none')}; rebuild it, or pass --modes none")

    runs = {m: [] for m in modes}
    for i in range(a.repeat):
        for m in modes:
            print(f"run {i + 1}/{a.repeat}: --compress {m}", file=sys.stderr, flush=True)
            runs[m].append(run_mode(a, m, knows))
            time.sleep(1)

    def med(m, key):
        return statistics.median(r[key] for r in runs[m])

    base = med("none", "bytes_per_step") if "none" in runs else None
    print(f"\nLeNet-5, Fashion-MNIST, {a.workers} workers x batch 64, {a.steps} steps, "
          f"{'one shared link' if a.medium == 'shared' else 'each link'} {a.rate}, "
          f"{a.delay}, {a.loss} loss each way ({a.shaper}), median of {a.repeat} runs")
    print(f"{'mode':<8}{'step ms':>10}{'KB/step':>10}{'vs none':>9}{'test acc':>10}")
    for m in modes:
        b = med(m, "bytes_per_step")
        ratio = f"{b / base:.3f}" if base else "-"
        print(f"{m:<8}{med(m, 'step_ms'):>10.1f}{b / 1e3:>10.1f}{ratio:>9}{med(m, 'test_acc'):>10.4f}")
    print("KB/step: bytes through the hub's ends of the links, both directions, over all workers")
    if a.json:
        json.dump({"settings": {k: getattr(a, k) for k in ("workers", "steps", "rate", "delay", "loss", "shaper",
                                                           "repeat")},
                   "runs": runs,
                   "median": {m: {k: med(m, k) for k in ("step_ms", "bytes_per_step", "test_acc")} for m in modes}},
                  open(a.json, "w"), indent=2)


if __name__ == "__main__":
    main()
