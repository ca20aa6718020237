#!/usr/bin/python3
"""What data that differs per device costs: accuracy after a fixed budget.

For each worker count, --partition and --sync-every, runs a hub and N
workers on this machine (deploy/local-cluster.sh; LeNet-5 on Fashion-MNIST
unless --extra says otherwise) for --epochs of samples and prints the median
test accuracy over --seeds (each seed draws its own partition, data order
and initial weights), next to the IID run's. --extra adds mthub flags to
every run, e.g. a correction to compare with and without.

  tests/bench/non_iid.py [--workers 3,8] [--partitions iid,dirichlet:0.5,dirichlet:0.1]
      [--sync 1,auto] [--seeds 3] [--epochs 1] [--extra "..."] [--build build] [--json out.json]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(a, workers, partition, sync, seed):
    with tempfile.TemporaryDirectory() as out:
        cmd = [os.path.join(ROOT, "deploy", "local-cluster.sh"), "--workers", str(workers), "--out", out, "--",
               "--partition", partition, "--sync-every", sync, "--seed", str(seed), "--epochs", str(a.epochs),
               "--batch-policy", "fixed", "--log-every", "600", "--export", os.path.join(out, "m.mtc"),
               *a.extra.split()]
        r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, MT_BUILD_DIR=a.build))
        if r.returncode != 0:
            raise SystemExit(f"failed: {' '.join(cmd)}\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
        rep = json.load(open(os.path.join(out, "hub.json")))
        return rep["test_accuracy"], rep["train_seconds"]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workers", default="3,8")
    p.add_argument("--partitions", default="iid,dirichlet:0.5,dirichlet:0.1")
    p.add_argument("--sync", default="1,auto")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--extra", default="")
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--json")
    a = p.parse_args()
    rows = []
    print(f"extra mthub flags: {a.extra or '(none)'}; {a.epochs} epoch(s); median of {a.seeds} seed(s)")
    print("| workers | --sync-every | --partition | test accuracy (median) | per seed | vs iid | train s |")
    print("|---|---|---|---|---|---|---|")
    for workers in map(int, a.workers.split(",")):
        for sync in a.sync.split(","):
            iid = None
            for partition in a.partitions.split(","):
                runs = [run(a, workers, partition, sync, seed) for seed in range(1, a.seeds + 1)]
                accs = [acc for acc, _ in runs]
                med = statistics.median(accs)
                if partition == "iid":
                    iid = med
                gap = f"{(med - iid) * 100:+.1f} pts" if iid is not None else ""
                secs = statistics.median(s for _, s in runs)
                print(f"| {workers} | {sync} | {partition} | {med:.4f} | {', '.join(f'{x:.3f}' for x in accs)} | "
                      f"{gap} | {secs:.1f} |", flush=True)
                rows.append({"workers": workers, "sync_every": sync, "partition": partition, "median": med,
                             "accuracies": accs, "train_seconds": secs})
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"extra": a.extra, "epochs": a.epochs, "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
