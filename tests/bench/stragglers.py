#!/usr/bin/python3
"""A fast and a slow worker: fixed vs balanced batches vs the fast one alone.

Two `mtworker --threads 1` on this machine, one of them `--slowdown 4`
(every step takes 4x its compute: a device a quarter as fast), training
LeNet-5 on Fashion-MNIST with the same global batch under
`mthub --batch-policy fixed` and `--batch-policy balanced`, and the fast
worker alone. With no network cost the ideal aggregate is 1.25x the fast
worker alone (it adds a quarter of a device); fixed halves the batch on
each and waits for the slow one, about 0.5x. The three alternate,
--repeat times; medians of the hub's samples/s are compared.

  tests/bench/stragglers.py [--repeat 3] [--steps 1500] [--global-batch 128] [--slowdown 4] [--build build] [--json out.json]
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


def run(build, policy, slowdowns, steps, global_batch, extra_hub=()):
    """One hub and one worker per entry of `slowdowns`; returns the hub report."""
    with tempfile.TemporaryDirectory() as out:
        port_file = os.path.join(out, "port")
        hub_cmd = [os.path.join(build, "hub", "mthub"), "--workers", str(len(slowdowns)), "--bind", "127.0.0.1",
                   "--port", "0", "--port-file", port_file, "--global-batch", str(global_batch),
                   "--steps", str(steps), "--batch-policy", policy, "--log-every", "60",
                   "--report", os.path.join(out, "hub.json"), *extra_hub]
        hub_log = open(os.path.join(out, "hub.log"), "w")
        hub = subprocess.Popen(hub_cmd, stdout=hub_log, stderr=subprocess.STDOUT)
        workers = []
        try:
            for _ in range(200):
                if os.path.exists(port_file) and open(port_file).read().strip():
                    break
                time.sleep(0.1)
            else:
                raise RuntimeError("hub did not start: " + open(os.path.join(out, "hub.log")).read()[-2000:])
            port = open(port_file).read().strip()
            for i, f in enumerate(slowdowns):
                cmd = [os.path.join(build, "worker", "mtworker"), "--hub", f"127.0.0.1:{port}", "--threads", "1",
                       "--name", f"w{i}x{f}", "--slowdown", str(f)]
                workers.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            if hub.wait(timeout=600) != 0:
                raise RuntimeError("hub failed: " + open(os.path.join(out, "hub.log")).read()[-2000:])
            for w in workers:
                w.wait(timeout=60)
        finally:
            for p in [hub, *workers]:
                if p.poll() is None:
                    p.kill()
        return json.load(open(os.path.join(out, "hub.json")))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--global-batch", type=int, default=128)
    ap.add_argument("--slowdown", type=float, default=4.0)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--json")
    a = ap.parse_args()
    cases = {
        "fast alone": ("fixed", [1]),
        "fixed": ("fixed", [1, a.slowdown]),
        "balanced": ("balanced", [1, a.slowdown]),
    }
    runs = {name: [] for name in cases}
    for i in range(a.repeat):
        for name, (policy, slowdowns) in cases.items():
            print(f"run {i + 1}/{a.repeat}: {name}", file=sys.stderr, flush=True)
            runs[name].append(run(a.build, policy, slowdowns, a.steps, a.global_batch))
            time.sleep(0.5)

    def med(name, key):
        return statistics.median(r[key] for r in runs[name])

    alone = med("fast alone", "samples_per_second")
    ideal = alone * (1 + 1 / a.slowdown)
    print(f"\nLeNet-5, Fashion-MNIST, global batch {a.global_batch}, {a.steps} steps, one worker --slowdown "
          f"{a.slowdown:g}; median of {a.repeat} runs")
    print(f"{'':<12}{'samples/s':>10}{'x alone':>9}{'of ideal':>10}{'slow batch':>12}{'test acc':>10}")
    result = {"ideal_samples_per_second": ideal, "cases": {}}
    for name in cases:
        sps = med(name, "samples_per_second")
        slow = [w["mean_batch"] for r in runs[name] for w in r["workers"] if "x1" not in w["name"][-2:]]
        slow_b = statistics.median(slow) if slow else float("nan")
        print(f"{name:<12}{sps:>10.0f}{sps / alone:>9.3f}{sps / ideal:>10.3f}{slow_b:>12.1f}"
              f"{med(name, 'test_accuracy'):>10.4f}")
        result["cases"][name] = {"samples_per_second": sps, "x_alone": sps / alone, "of_ideal": sps / ideal,
                                 "slow_mean_batch": slow_b, "runs": runs[name]}
    print(f"ideal (1 + 1/{a.slowdown:g}) x alone = {ideal:.0f} samples/s")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
