#!/usr/bin/python3
"""Does a group of phones on one Wi-Fi beat one phone alone?

Runs deploy/netem-cluster.sh (needs root) with phone-class workers
(`mtworker --slowdown S`, default 10: a phone's compute on this machine's
core): one worker alone on a fast link, then N workers sharing one shaped
medium (--medium shared: --rate is everyone's total each way) for each
--compress mode, and heterogeneous groups on the same medium (--sets: each
a list of speed factors, "1,5" one worker S and one 5 x S slower; the
default is that pair; "1,5;1,2,5;1,20" are issue 43's cases), each with
every --partitions value (each worker its own samples: mthub --partition).
--busy starts one CPU-bound process per device beside every run (alone
too), as a phone busy with something else. Prints samples/s, the ratio to one alone, step
time, bytes per sample on the hub's link, test accuracy, training seconds
(with --epochs 1: the time to one epoch) and, with
--target-accuracy, the seconds to reach it (the hub evaluates every
--eval-every steps); writes every run's figures with --json.

Repeat i runs every configuration with --seed i (--seeds vary, the
default), so a median is over data orders and initial weights, not over
timing alone: with one seed the step at which a run first evaluates above
a target near its plateau is nearly fixed, and moving --eval-every from 24
to 25 moved one phone alone from 529 to 626 steps. The ratio of each
repeat's group to its own alone run is printed too.

  tests/bench/wifi.py [--workers 3] [--slowdown 10] [--rate 32mbit] [--loss 1%] [--delay 5ms]
      [--shaper netem|tbf] [--modes none,int8] [--sync-every 1,16] [--overlap off,on]
      [--steps 100 | --epochs 1] [--sets "1,5;1,2,5;1,20"] [--partitions iid,dirichlet:0.1] [--busy]
      [--target-accuracy X --eval-every 50] [--no-pair] [--repeat 1] [--hub-args "..."] [--all-args "..."]
      [--build build] [--json out.json]

On kernels without netem pass --shaper tbf --delay 0ms (rate and loss only).

A 32x32x3 model (--model mobilenet-tiny) trains on --dataset fashion-mnist-32:
Fashion-MNIST padded to 32x32 and repeated over three channels, written
once as CIFAR-10 binary files under the temporary directory; e.g.

  tests/bench/wifi.py --model mobilenet-tiny --dataset fashion-mnist-32 --slowdown 3 --no-pair
      --modes auto --sync-every auto --epochs 1 --target-accuracy 0.8 --eval-every 100
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import gzip
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


FASHION_MNIST = "/usr/share/datasets/fashion-mnist"


def fashion_mnist_32(src=FASHION_MNIST):
    """Fashion-MNIST as 32x32x3 CIFAR-10 binary files (zero border, the
    image in each channel), written once; returns their directory."""
    out = os.path.join(tempfile.gettempdir(), "mt-bench-fashion-mnist-32")
    if os.path.exists(os.path.join(out, "test_batch.bin")):
        return out
    os.makedirs(out, exist_ok=True)

    def read(name):
        path = os.path.join(src, name)
        return gzip.open(path + ".gz").read() if os.path.exists(path + ".gz") else open(path, "rb").read()

    blank_row, side = bytes(32), bytes(2)
    for split, target in (("train", "data_batch_1.bin"), ("t10k", "test_batch.bin")):
        images, labels = read(f"{split}-images-idx3-ubyte")[16:], read(f"{split}-labels-idx1-ubyte")[8:]
        records = []
        for i, label in enumerate(labels):
            img = images[i * 784:(i + 1) * 784]
            plane = blank_row * 2 + b"".join(side + img[r * 28:(r + 1) * 28] + side for r in range(28)) + blank_row * 2
            records.append(bytes([label]) + plane * 3)
        with open(os.path.join(out, target + ".part"), "wb") as f:
            f.write(b"".join(records))
        os.replace(os.path.join(out, target + ".part"), os.path.join(out, target))
    return out


def cluster(a, workers, medium, rate, delay, loss, slowdowns, hub_flags, seed=1):
    """One netem-cluster.sh run; returns its netem.json plus what the hub reported."""
    with tempfile.TemporaryDirectory() as out:
        cmd = ["bash", os.path.join(ROOT, "deploy", "netem-cluster.sh"), "--workers", str(workers),
               "--medium", medium, "--rate", rate, "--delay", delay,
               "--loss", loss, "--shaper", a.shaper, "--out", out]
        for i, s in enumerate(slowdowns):
            if s > 1:
                cmd += ["--worker-args", str(i), f"--slowdown {s:g}"]
        length = ["--steps", str(a.steps)] if a.steps else ["--epochs", str(a.epochs)]
        cmd += ["--", *length, "--log-every", "60", "--seed", str(seed), "--model", a.model,
                "--dataset", a.dataset, *hub_flags]
        if a.target_accuracy:
            cmd += ["--target-accuracy", str(a.target_accuracy), "--eval-every", str(a.eval_every)]
        env = dict(os.environ, MT_BUILD_DIR=a.build)
        if os.path.isdir(a.dataset):  # a path the hub names: the workers must allow it
            env["MT_WORKER_ARGS"] = (env.get("MT_WORKER_ARGS", "") + " --allow-data " + a.dataset).strip()
        run = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if run.returncode != 0:
            sys.exit(f"netem-cluster.sh failed (exit {run.returncode}): {' '.join(cmd)}\n"
                     f"{(run.stdout + run.stderr)[-1500:]}")
        net = json.load(open(os.path.join(out, "netem.json")))
        hub = json.load(open(os.path.join(out, "hub.json")))
    samples = hub["samples"]
    return {"samples_per_s": hub["samples_per_second"], "step_ms": net["step_ms"],
            "bytes_per_sample": (net["hub_tx_bytes"] + net["hub_rx_bytes"]) / samples if samples else None,
            "test_acc": hub["test_accuracy"], "seconds_to_target": hub.get("seconds_to_target", -1),
            "train_seconds": hub["train_seconds"], "steps": hub["steps"],
            "final_sync_every": hub.get("final_sync_every"), "final_compression": hub.get("final_compression"),
            "compression_changes": hub.get("compression_changes", []), "sync_changes": hub.get("sync_changes", []),
            "samples_to_target": next((e["samples"] for e in hub.get("eval_history", [])
                                       if a.target_accuracy and e["test_accuracy"] >= a.target_accuracy), -1)}


def name_devices(name, a):
    """How many devices a job's name says it runs: "3 shared ..." or "1x+5x ..."."""
    first = name.split()[0]
    return len(first.split("+")) if "x" in first else int(first)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", type=int, default=3)
    ap.add_argument("--slowdown", type=float, default=10, help="phone-class compute: mtworker --slowdown")
    ap.add_argument("--rate", default="32mbit", help="the shared medium's rate, each way")
    ap.add_argument("--loss", default="1%")
    ap.add_argument("--delay", default="5ms")
    ap.add_argument("--shaper", default="netem", choices=["netem", "tbf"])
    ap.add_argument("--fast-rate", default="10gbit", help="the link of the worker alone")
    ap.add_argument("--modes", default="none,int8", help="comma-separated --compress modes")
    ap.add_argument("--sync-every", default="1,auto", help="comma-separated mthub --sync-every values")
    ap.add_argument("--overlap", default="off", help="comma-separated: off (the default), on (mthub "
                    "--overlap: rounds overlap their exchange)")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--epochs", type=int, default=0, help="run whole epochs instead of --steps")
    ap.add_argument("--target-accuracy", type=float, default=0)
    ap.add_argument("--eval-every", type=int, default=50)
    ap.add_argument("--no-pair", action="store_true", help="skip the heterogeneous groups (--sets)")
    ap.add_argument("--sets", default="1,5",
                    help="heterogeneous groups, ';'-separated, each ','-separated speed factors of --slowdown")
    ap.add_argument("--partitions", default="iid",
                    help="comma-separated mthub --partition values for the group runs (iid: none)")
    ap.add_argument("--busy", action="store_true",
                    help="one CPU-bound process per device beside every run (alone included)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--hub-args", default="", help="more mthub flags for the group runs, e.g. \"--lr 0.15\"")
    ap.add_argument("--all-args", default="",
                    help="more mthub flags for every run, one alone included, e.g. \"--optimizer adam\"")
    ap.add_argument("--model", default="lenet5", help="mthub --model")
    ap.add_argument("--dataset", default="fashion-mnist",
                    help="mthub --dataset; fashion-mnist-32: Fashion-MNIST as 32x32x3 (see above)")
    ap.add_argument("--seeds", choices=["vary", "fixed"], default="vary",
                    help="vary: repeat i runs with --seed i; fixed: every run with --seed 1")
    ap.add_argument("--json")
    a = ap.parse_args()
    if a.epochs:
        a.steps = 0
    if a.dataset == "fashion-mnist-32":
        a.dataset = fashion_mnist_32()
    modes = [m for m in a.modes.split(",") if m]
    if os.geteuid() != 0:
        sys.exit("wifi.py needs root (deploy/netem-cluster.sh makes network namespaces)")

    jobs = [("alone", lambda seed: cluster(a, 1, "separate", a.fast_rate, "0ms", "0%", [a.slowdown],
                                           a.all_args.split(), seed))]
    syncs = [h for h in a.sync_every.split(",") if h]
    partitions = [p for p in a.partitions.split(",") if p]
    overlaps = [o for o in a.overlap.split(",") if o]
    for o in overlaps:
        if o not in ("on", "off"):
            sys.exit(f"--overlap: '{o}' is neither on nor off")
    for h, o in [(h, o) for h in syncs for o in overlaps if h != "1" or o == overlaps[0]]:
        extra = ["--overlap"] if o == "on" else []
        tag = " overlap" if o == "on" and h != "1" else ""
        for m in modes:
            jobs.append((f"{a.workers} shared {m} H={h}{tag}",
                         lambda seed, m=m, h=h, extra=extra: cluster(
                             a, a.workers, "shared", a.rate, a.delay, a.loss, [a.slowdown] * a.workers,
                             ["--compress", m, "--sync-every", h] + extra + a.hub_args.split() + a.all_args.split(),
                             seed)))
        if not a.no_pair:
            m = modes[-1]
            for speeds in [[float(x) for x in group.split(",")] for group in a.sets.split(";") if group]:
                name = "+".join(f"{x:g}x" for x in speeds)
                for part in partitions:
                    flags = [] if part == "iid" else ["--partition", part]
                    jobs.append((f"{name} {m} H={h}{tag}" + (f" {part}" if flags else ""),
                                 lambda seed, m=m, h=h, extra=extra, speeds=speeds, flags=flags: cluster(
                                     a, len(speeds), "shared", a.rate, a.delay, a.loss,
                                     [a.slowdown * x for x in speeds],
                                     ["--compress", m, "--sync-every", h] + extra + flags + a.hub_args.split()
                                     + a.all_args.split(), seed)))
        for part in partitions:
            if part == "iid":
                continue
            for m in modes:
                jobs.append((f"{a.workers} shared {m} H={h}{tag} {part}",
                             lambda seed, m=m, h=h, extra=extra, part=part: cluster(
                                 a, a.workers, "shared", a.rate, a.delay, a.loss, [a.slowdown] * a.workers,
                                 ["--compress", m, "--sync-every", h, "--partition", part] + extra
                                 + a.hub_args.split() + a.all_args.split(), seed)))
    runs = {name: [] for name, _ in jobs}
    for i in range(a.repeat):
        for name, job in jobs:
            seed = i + 1 if a.seeds == "vary" else 1
            print(f"run {i + 1}/{a.repeat} (seed {seed}): {name}", file=sys.stderr, flush=True)
            devices = 1 if name == "alone" else name_devices(name, a)
            busy = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(devices if a.busy else 0)]
            try:
                runs[name].append(dict(job(seed), seed=seed))
            finally:
                for b in busy:
                    b.kill()
                    b.wait()

    def med(name, key):
        values = [r[key] for r in runs[name] if r[key] is not None]
        return statistics.median(values) if values else float("nan")

    alone = med("alone", "samples_per_s")
    length = f"{a.steps} steps" if a.steps else f"{a.epochs} epoch(s)"
    print(f"\n{a.model}, {os.path.basename(a.dataset.rstrip('/'))}, batch 64 per worker, {length}, workers --slowdown {a.slowdown:g}; "
          f"shared medium {a.rate}, {a.delay}, {a.loss} loss each way ({a.shaper}); median of {a.repeat}")
    print(f"{'run':<32}{'samples/s':>10}{'x alone':>9}{'step ms':>9}{'B/sample':>10}{'test acc':>10}"
          f"{'train s':>9}{'s to target':>13}")
    for name, _ in jobs:
        target = med(name, "seconds_to_target")
        print(f"{name:<32}{med(name, 'samples_per_s'):>10.0f}{med(name, 'samples_per_s') / alone:>9.2f}"
              f"{med(name, 'step_ms'):>9.1f}{med(name, 'bytes_per_sample'):>10.0f}{med(name, 'test_acc'):>10.4f}"
              f"{med(name, 'train_seconds'):>9.1f}"
              f"{(f'{target:.1f}' if target >= 0 else '-'):>13}")
    if a.target_accuracy:
        # Each repeat against its own alone run (same seed, next to it in time).
        print("\nseconds to target, one alone / the group, per repeat (median):")
        for name, _ in jobs[1:]:
            ratios = [al["seconds_to_target"] / r["seconds_to_target"]
                      for al, r in zip(runs["alone"], runs[name])
                      if al["seconds_to_target"] > 0 and r["seconds_to_target"] > 0]
            shown = ", ".join(f"{x:.2f}" for x in ratios)
            print(f"  {name:<30} {shown}  ({statistics.median(ratios):.2f}x)" if ratios else f"  {name:<30} -")
        print("\nsamples to target, the group / one alone, per repeat (median):")
        for name, _ in jobs[1:]:
            ratios = [r["samples_to_target"] / al["samples_to_target"]
                      for al, r in zip(runs["alone"], runs[name])
                      if al["samples_to_target"] > 0 and r["samples_to_target"] > 0]
            shown = ", ".join(f"{x:.2f}" for x in ratios)
            print(f"  {name:<30} {shown}  ({statistics.median(ratios):.2f}x)" if ratios else f"  {name:<30} -")
    if a.json:
        json.dump({"args": vars(a), "runs": runs}, open(a.json, "w"), indent=2)


if __name__ == "__main__":
    main()
