#!/usr/bin/python3
"""Samples to a test accuracy against the batch: what a larger global batch costs.

A group of W workers exchanging every step is synchronous SGD at a global
batch of W times a worker's; local SGD's rounds hold more samples still. So
the samples one worker alone needs to reach a target at batch B, with the
best learning rate found for B, bound what the group can do: W workers
process at most W times the samples per second, and if they need k times the
samples, they reach the target at most W/k times sooner.

Runs `mtworker --standalone` (one thread, two runs at a time) for each batch,
learning rate and seed, evaluating about every --eval-samples samples, and
prints the median samples to the target per (batch, lr), with the runs that
missed it in --epochs counted as misses. With --workers N (N > 1) each run is
instead a hub and N workers (deploy/local-cluster.sh, one run at a time,
`--batch-policy fixed --compress none`, so a seed gives the same batches
whatever the timing), --batches being the global batch, --sync-every H
the round length and --compress a fixed encoding to measure (rounds are cut at evaluations, as the hub does).

  tests/bench/batch_scaling.py [--batches 64,192] [--lrs 0.05,0.1,0.15] [--seeds 3]
      [--target 0.85] [--epochs 3] [--optimizer sgd] [--momentum 0.9] [--extra "..."]
      [--workers 1] [--sync-every 1] [--compress none] [--build build] [--json out.json]
"""
import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(a, batch, lr, seed):
    eval_every = max(1, round(a.eval_samples / batch))
    if a.workers > 1 and a.sync_every.isdigit():
        # An evaluation ends a round: evaluate at round ends only, or the rounds measured are shorter than H.
        h = int(a.sync_every)
        eval_every = -(-eval_every // h) * h
    training = ["--lr", str(lr), "--seed", str(seed), "--epochs", str(a.epochs), "--eval-every", str(eval_every),
                "--target-accuracy", str(a.target), "--optimizer", a.optimizer,
                "--log-every", "600"] + a.extra.split()
    if a.optimizer == "sgd":  # Adam has no momentum: mthub and mtworker refuse the flag with it
        training += ["--momentum", str(a.momentum)]
    with tempfile.TemporaryDirectory() as out:
        if a.workers > 1:
            cmd = [os.path.join(ROOT, "deploy", "local-cluster.sh"), "--workers", str(a.workers), "--out", out, "--",
                   "--global-batch", str(batch), "--batch-policy", "fixed", "--compress", a.compress,
                   "--sync-every", str(a.sync_every), "--export", os.path.join(out, "m.mtc")] + training
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env=dict(os.environ, MT_BUILD_DIR=a.build))
            r = json.load(open(os.path.join(out, "hub.json")))
        else:
            report = os.path.join(out, "r.json")
            cmd = [os.path.join(a.build, "worker", "mtworker"), "--standalone", "--threads", "1",
                   "--batch", str(batch), "--export", os.path.join(out, "m.mtc"), "--report", report] + training
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            r = json.load(open(report))
    step = r.get("step_to_target", -1)
    return (batch, lr, seed, step * batch if step and step > 0 else None, r["test_accuracy"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batches", default="64,192")
    ap.add_argument("--lrs", default="0.05,0.1,0.15")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--target", type=float, default=0.85)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--eval-samples", type=int, default=1600, help="samples between evaluations")
    ap.add_argument("--optimizer", default="sgd")
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--extra", default="", help="more mtworker flags, space-separated")
    ap.add_argument("--workers", type=int, default=1, help="more than 1: a hub and this many workers per run")
    ap.add_argument("--sync-every", default="1", help="with --workers: the hub's --sync-every")
    ap.add_argument("--compress", default="none", help="with --workers: the hub's --compress (a fixed encoding)")
    ap.add_argument("--parallel", type=int, default=2, help="standalone runs at a time (groups run one at a time)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--json")
    a = ap.parse_args()
    jobs = [(int(b), float(lr), s) for b in a.batches.split(",") for lr in a.lrs.split(",")
            for s in range(1, a.seeds + 1)]
    results = {}
    with concurrent.futures.ThreadPoolExecutor(a.parallel if a.workers == 1 else 1) as pool:
        for batch, lr, seed, samples, acc in pool.map(lambda j: run(a, *j), jobs):
            results.setdefault((batch, lr), []).append((seed, samples, acc))
            print(f"batch {batch} lr {lr} seed {seed}: "
                  f"{samples if samples else 'missed'} samples, final acc {acc:.4f}", flush=True)
    who = "one worker alone" if a.workers == 1 else f"{a.workers} workers, --sync-every {a.sync_every}"
    print(f"\nsamples to {a.target}, {who} ({a.optimizer}, momentum {a.momentum}, {a.extra or 'no extra flags'}, "
          f"seeds 1-{a.seeds}, at most {a.epochs} epochs)")
    print(f"{'batch':>6}{'lr':>8}{'median':>10}{'runs':>30}")
    for (batch, lr), runs in sorted(results.items()):
        # A miss counts as more than any hit, so the median stays honest.
        keyed = sorted(s if s else float("inf") for _, s, _ in runs)
        med = statistics.median(keyed)
        shown = " / ".join(str(s) if s else "miss" for _, s, _ in runs)
        print(f"{batch:>6}{lr:>8}{('miss' if med == float('inf') else int(med)):>10}   {shown}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump([{"batch": b, "lr": lr, "runs": runs} for (b, lr), runs in sorted(results.items())], f, indent=1)


if __name__ == "__main__":
    main()
