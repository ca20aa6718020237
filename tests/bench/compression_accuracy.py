#!/usr/bin/python3
"""Test accuracy after one epoch with each --compress encoding (none, fp16, int8, topk),
or with --secure-aggregation (mode secagg: dense, masked).

mthub --workers 3 with three `mtworker --threads 1` on this machine (LeNet-5,
Fashion-MNIST, global batch 192, `--batch-policy fixed` so that a seed gives
the same batches whatever the timing), one epoch per run, for --seeds
seeds and each mode. One epoch's accuracy moves by a point or two from seed
to seed, so modes are compared by their mean over the same seeds, and per
seed. Also prints the gradient bytes per step and the seconds per step
(wall, on this machine) from the hub's report.

  tests/bench/compression_accuracy.py [--seeds 5] [--modes none,fp16,int8,topk] [--build build]
      [--json out.json]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODES = ["none", "fp16", "int8", "topk"]


def run(build, mode, seed):
    with tempfile.TemporaryDirectory() as out:
        flags = ["--compress", "none", "--secure-aggregation"] if mode == "secagg" else ["--compress", mode]
        cmd = [os.path.join(ROOT, "deploy", "local-cluster.sh"), "--workers", "3", "--out", out, "--",
               "--epochs", "1", "--log-every", "60", "--batch-policy", "fixed", "--seed", str(seed)] + flags
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env=dict(os.environ, MT_BUILD_DIR=build))
        return json.load(open(os.path.join(out, "hub.json")))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--modes", default=",".join(MODES), help="comma-separated; none comes first")
    ap.add_argument("--json")
    a = ap.parse_args()
    modes = ["none"] + [m for m in a.modes.split(",") if m and m != "none"]
    acc = {m: [] for m in modes}
    bytes_per_step = {m: [] for m in modes}
    seconds_per_step = {m: [] for m in modes}
    for seed in range(1, a.seeds + 1):
        for m in modes:
            r = run(a.build, m, seed)
            acc[m].append(r["test_accuracy"])
            bytes_per_step[m].append(r["gradient_bytes_per_step"])
            seconds_per_step[m].append(r["train_seconds"] / max(1, r["steps"]))
        print(f"seed {seed}: " + "  ".join(f"{m} {acc[m][-1]:.4f}" for m in modes), flush=True)
    print(f"\nLeNet-5, Fashion-MNIST, 3 workers, global batch 192, 1 epoch, seeds 1-{a.seeds}")
    print(f"{'mode':<6}{'mean acc':>10}{'vs none':>10}{'min':>8}{'max':>8}{'KB/step':>10}{'bytes vs none':>15}"
          f"{'ms/step':>9}")
    base_acc, base_bytes = statistics.mean(acc["none"]), statistics.mean(bytes_per_step["none"])
    for m in modes:
        mean, b = statistics.mean(acc[m]), statistics.mean(bytes_per_step[m])
        print(f"{m:<6}{mean:>10.4f}{100 * (mean - base_acc):>+9.2f}p{min(acc[m]):>8.4f}{max(acc[m]):>8.4f}"
              f"{b / 1024:>10.1f}{b / base_bytes:>15.3f}{1e3 * statistics.mean(seconds_per_step[m]):>9.1f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"accuracy": acc, "gradient_bytes_per_step": bytes_per_step,
                       "seconds_per_step": seconds_per_step}, f, indent=1)


if __name__ == "__main__":
    main()
