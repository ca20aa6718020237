#!/usr/bin/python3
"""What the exchange costs on loopback: hub + one worker vs the worker alone.

`mtworker --standalone --threads 1` and `mthub --workers 1` with one
`mtworker --threads 1` on 127.0.0.1 train LeNet-5 on Fashion-MNIST for the
same steps at the same batch (global batch = the worker's batch); the ratio
of samples/s is what the per-step exchange leaves of the worker's speed
(1.0: free). Both alternate, --repeat times, per batch; medians compared.
The hub runs its default --sync-every (auto), which on loopback stays in the
exact per-step mode: the report's final_sync_every is printed to show it.

  tests/bench/exchange_cost.py [--batches 64,256] [--steps 600] [--repeat 3] [--build build] [--json out.json]
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


def standalone(build, batch, steps):
    with tempfile.TemporaryDirectory() as out:
        report = os.path.join(out, "w.json")
        cmd = [os.path.join(build, "worker", "mtworker"), "--standalone", "--threads", "1", "--batch",
               str(batch), "--steps", str(steps), "--log-every", "60", "--report", report]
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if run.returncode != 0:
            sys.exit(f"standalone failed: {(run.stdout + run.stderr)[-1500:]}")
        return json.load(open(report))


def with_hub(build, batch, steps):
    with tempfile.TemporaryDirectory() as out:
        port_file, report = os.path.join(out, "port"), os.path.join(out, "hub.json")
        hub = subprocess.Popen([os.path.join(build, "hub", "mthub"), "--workers", "1", "--bind", "127.0.0.1",
                                "--port", "0", "--port-file", port_file, "--global-batch", str(batch),
                                "--steps", str(steps), "--log-every", "60", "--report", report],
                               stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        worker = None
        try:
            for _ in range(300):
                if os.path.exists(port_file) and open(port_file).read().strip():
                    break
                time.sleep(0.1)
            else:
                sys.exit("hub did not start")
            port = open(port_file).read().strip()
            worker = subprocess.Popen([os.path.join(build, "worker", "mtworker"), "--hub", f"127.0.0.1:{port}",
                                       "--threads", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if hub.wait(timeout=600) != 0:
                sys.exit("hub failed")
            worker.wait(timeout=60)
        finally:
            for p in (hub, worker):
                if p and p.poll() is None:
                    p.kill()
        return json.load(open(report))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batches", default="64,256")
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--json")
    a = ap.parse_args()
    batches = [int(b) for b in a.batches.split(",") if b]
    runs = {b: {"alone": [], "hub": [], "h": []} for b in batches}
    for i in range(a.repeat):
        for b in batches:
            print(f"run {i + 1}/{a.repeat}: batch {b}", file=sys.stderr, flush=True)
            runs[b]["alone"].append(standalone(a.build, b, a.steps)["samples_per_second"])
            hub = with_hub(a.build, b, a.steps)
            runs[b]["hub"].append(hub["samples_per_second"])
            runs[b]["h"].append(hub.get("final_sync_every", 1))
    print(f"\nLeNet-5, Fashion-MNIST, {a.steps} steps, one thread; median of {a.repeat}")
    print(f"{'batch':>6}{'alone/s':>10}{'hub+1/s':>10}{'ratio':>8}{'  H at end'}")
    for b in batches:
        alone, hub = statistics.median(runs[b]["alone"]), statistics.median(runs[b]["hub"])
        print(f"{b:>6}{alone:>10.0f}{hub:>10.0f}{hub / alone:>8.2f}  {runs[b]['h']}")
    if a.json:
        json.dump({"args": vars(a), "runs": runs}, open(a.json, "w"), indent=2)


if __name__ == "__main__":
    main()
