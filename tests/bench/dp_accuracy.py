#!/usr/bin/python3
"""Test accuracy after one epoch under differential privacy, against plain.

mthub --workers 3 with three mtworkers on this machine (deploy/local-cluster.sh:
LeNet-5, Fashion-MNIST, global batch 192, `--batch-policy fixed`, TLS), one
epoch per run: without DP, then `--dp-clip C --dp-epsilon E` for each E
(delta 1e-5), at --sync-every H. Prints each run's accuracy, the noise
multiplier the hub solved for and the epsilon it reports spent.

  tests/bench/dp_accuracy.py [--epsilons 1,8,32,128,1000] [--sync 1] [--clip 1]
      [--seeds 1] [--build build] [--json out.json]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(build, seed, sync, dp_flags):
    with tempfile.TemporaryDirectory() as out:
        cmd = [os.path.join(ROOT, "deploy", "local-cluster.sh"), "--workers", "3", "--out", out, "--",
               "--epochs", "1", "--log-every", "60", "--batch-policy", "fixed", "--seed", str(seed),
               "--sync-every", str(sync), "--http-port", "0"] + dp_flags
        # A model at chance ends the run with exit 1 (the hub's health check);
        # its report is still written, and its accuracy is the point here.
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env=dict(os.environ, MT_BUILD_DIR=build))
        report = os.path.join(out, "hub.json")
        if not os.path.exists(report):
            raise SystemExit(f"the run failed (exit {done.returncode}) without a report: {' '.join(cmd)}")
        return json.load(open(report))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--epsilons", default="1,8,32,128,1000")
    ap.add_argument("--sync", type=int, default=1)
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--json")
    a = ap.parse_args()
    modes = ["plain"] + [f"eps {e}" for e in a.epsilons.split(",") if e]
    acc = {m: [] for m in modes}
    detail = {m: [] for m in modes}
    for seed in range(1, a.seeds + 1):
        for m in modes:
            flags = [] if m == "plain" else ["--dp-clip", str(a.clip), "--dp-epsilon", m.split()[1]]
            r = run(a.build, seed, a.sync, flags)
            acc[m].append(r["test_accuracy"])
            detail[m].append(r.get("differential_privacy"))
            dp = r.get("differential_privacy") or {}
            print(f"seed {seed} {m:<10} accuracy {r['test_accuracy']:.4f}"
                  + (f"  noise multiplier {dp['noise_multiplier']:.3g}, epsilon spent {dp['epsilon']:.3g}"
                     f" over {dp['rounds']} rounds" if dp else ""), flush=True)
    base = statistics.mean(acc["plain"])
    print(f"\nLeNet-5, Fashion-MNIST, 3 workers, global batch 192, 1 epoch, H {a.sync}, clip {a.clip}")
    for m in modes:
        mean = statistics.mean(acc[m])
        print(f"{m:<10}{mean:>10.4f}{100 * (mean - base):>+9.2f}p")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"accuracy": acc, "privacy": detail, "sync": a.sync, "clip": a.clip}, f, indent=1)


if __name__ == "__main__":
    main()
