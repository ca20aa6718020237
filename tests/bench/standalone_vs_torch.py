#!/usr/bin/python3
"""Standalone LeNet-5 on Fashion-MNIST: mtworker vs PyTorch, same machine, one run.

Runs `mtworker --standalone` and the PyTorch reference torch_lenet.py at 1 and 2
threads (PyTorch at 2 threads with --blas-threads 1, its faster setting here),
alternating the two so machine noise hits both alike, and prints samples/s,
peak RSS and test accuracy side by side with the ratios mt/torch.

  tests/bench/standalone_vs_torch.py [--epochs 1] [--repeat 3] [--build build]
      --anchors DIR [--json out.json]

DIR holds torch_lenet.py (a PyTorch reference script, not part of this repository).

Needs a built tree (deploy/build.sh) and PyTorch (deploy/install-deps.sh --bench).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_mt(build, threads, epochs):
    with tempfile.NamedTemporaryFile(suffix=".json") as rep:
        cmd = [os.path.join(build, "worker", "mtworker"), "--standalone", "--model", "lenet5",
               "--dataset", "fashion-mnist", "--batch", "64", "--epochs", str(epochs), "--optimizer", "sgd", "--lr", "0.05",
               "--momentum", "0.9", "--threads", str(threads), "--report", rep.name, "--log-every", "60"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        r = json.load(open(rep.name))
    ep = r["epochs"][0]
    return {"samples_per_s": ep["samples"] / ep["train_seconds"], "peak_rss_mib": r["peak_rss_bytes"] / 2**20,
            "test_acc": [e["test_accuracy"] for e in r["epochs"]]}


def run_torch(anchors, threads, epochs):
    cmd = ["/usr/bin/python3", os.path.join(anchors, "torch_lenet.py"), "--epochs", str(epochs),
           "--threads", str(threads), "--quiet"]
    if threads > 1:
        cmd += ["--blas-threads", "1"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    r = json.loads(out.strip().splitlines()[-1])
    return {"samples_per_s": r["epoch1_samples_per_s"], "peak_rss_mib": r["peak_rss_mib"], "test_acc": r["test_acc"]}


def median_of(runs, key):
    return statistics.median(r[key] for r in runs)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--anchors", required=True, help="directory holding torch_lenet.py")
    ap.add_argument("--json", help="also write the results here")
    a = ap.parse_args()
    if not os.path.exists(os.path.join(a.anchors, "torch_lenet.py")):
        sys.exit(f"no torch_lenet.py under {a.anchors} (pass --anchors)")

    rows = []
    for t in [int(x) for x in a.threads.split(",")]:
        mt_runs, torch_runs = [], []
        for i in range(a.repeat):
            print(f"threads {t}: run {i + 1}/{a.repeat}", file=sys.stderr, flush=True)
            mt_runs.append(run_mt(a.build, t, a.epochs))
            torch_runs.append(run_torch(a.anchors, t, a.epochs))
        row = {"threads": t}
        for name, runs in (("mt", mt_runs), ("torch", torch_runs)):
            row[name] = {"samples_per_s": median_of(runs, "samples_per_s"),
                         "peak_rss_mib": median_of(runs, "peak_rss_mib"),
                         "test_acc": runs[-1]["test_acc"]}
        rows.append(row)

    best_torch = max(r["torch"]["samples_per_s"] for r in rows)
    print(f"\nLeNet-5, Fashion-MNIST, batch 64, {a.epochs} epoch(s), median of {a.repeat} runs")
    print(f"{'threads':>7} | {'mt samples/s':>12} {'torch samples/s':>15} {'ratio':>6} | "
          f"{'mt RSS MiB':>10} {'torch RSS MiB':>13} {'ratio':>6} | {'mt acc':>7} {'torch acc':>9}")
    for r in rows:
        m, t = r["mt"], r["torch"]
        print(f"{r['threads']:>7} | {m['samples_per_s']:>12.0f} {t['samples_per_s']:>15.0f} "
              f"{m['samples_per_s'] / t['samples_per_s']:>6.2f} | {m['peak_rss_mib']:>10.1f} "
              f"{t['peak_rss_mib']:>13.1f} {m['peak_rss_mib'] / t['peak_rss_mib']:>6.3f} | "
              f"{m['test_acc'][-1]:>7.4f} {t['test_acc'][-1]:>9.4f}")
    best_mt = max(r["mt"]["samples_per_s"] for r in rows)
    print(f"best mt / best torch samples/s: {best_mt / best_torch:.2f}")
    if a.json:
        json.dump({"rows": rows, "best_ratio": best_mt / best_torch}, open(a.json, "w"), indent=2)


if __name__ == "__main__":
    main()
