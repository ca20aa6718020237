#!/usr/bin/python3
"""Hub + 3 workers vs PyTorch DDP (gloo, 3 ranks) on this machine, one run.

mt: mthub --workers 3 with three `mtworker --threads 1` (batch 64 each,
global batch 192), LeNet-5 on Fashion-MNIST, one epoch. Peer:
the PyTorch reference torch_ddp.py --world 3 (gloo on 127.0.0.1, 1 thread per
rank, batch 64 per rank). The two alternate, --repeat times, and the medians
are compared: aggregate samples/s and its ratio, test accuracy, memory, and
the hub's share of the step (its own CPU time for averaging, optimizer and
broadcast over the run's wall time; barrier waits excluded).

  tests/bench/cluster_vs_ddp.py [--repeat 3] [--build build] --anchors DIR [--json out.json]

DIR holds torch_ddp.py (a PyTorch reference script, not part of this repository).
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


def run_mt(build, workers, epochs):
    with tempfile.TemporaryDirectory() as out:
        cmd = [os.path.join(ROOT, "deploy", "local-cluster.sh"), "--workers", str(workers), "--out", out, "--",
               "--epochs", str(epochs), "--log-every", "60",
               "--optimizer", "sgd", "--lr", "0.05"]  # as the DDP anchor trains
        env = dict(os.environ, MT_BUILD_DIR=build)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        hub = json.load(open(os.path.join(out, "hub.json")))
        rss = [json.load(open(os.path.join(out, f"worker{i}.json")))["peak_rss_bytes"] for i in range(workers)]
    return {"samples_per_s": hub["samples_per_second"], "test_acc": hub["test_accuracy"],
            "hub_share": hub["hub_share"], "hub_wall_share": hub["hub_wall_share"],
            "hub_process_share": hub["hub_process_share"],
            "worker_rss_mib_sum": sum(rss) / 2**20, "hub_rss_mib": hub["peak_rss_bytes"] / 2**20}


def run_ddp(anchors, workers):
    cmd = ["/usr/bin/python3", os.path.join(anchors, "torch_ddp.py"), "--world", str(workers)]
    # The anchor picks a free port before its ranks bind it, so it can lose a
    # race now and then: one retry.
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        print("torch_ddp.py failed once; retrying:\n" + run.stderr[-2000:], file=sys.stderr)
        run = subprocess.run(cmd, check=True, capture_output=True, text=True)
    out = run.stdout
    r = json.loads(out.strip().splitlines()[-1])
    return {"samples_per_s": r["aggregate_samples_per_s"], "test_acc": r["test_acc_rank0"],
            "rss_mib_sum": r["peak_rss_mib_sum"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workers", type=int, default=3)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--anchors", required=True, help="directory holding torch_ddp.py")
    ap.add_argument("--json")
    a = ap.parse_args()
    if not os.path.exists(os.path.join(a.anchors, "torch_ddp.py")):
        sys.exit(f"no torch_ddp.py under {a.anchors} (pass --anchors)")
    mt_runs, ddp_runs = [], []
    for i in range(a.repeat):
        print(f"run {i + 1}/{a.repeat}", file=sys.stderr, flush=True)
        mt_runs.append(run_mt(a.build, a.workers, 1))
        time.sleep(1)
        ddp_runs.append(run_ddp(a.anchors, a.workers))
        time.sleep(1)

    def med(runs, key):
        return statistics.median(r[key] for r in runs)

    m_sps, d_sps = med(mt_runs, "samples_per_s"), med(ddp_runs, "samples_per_s")
    print(f"\nLeNet-5, Fashion-MNIST, {a.workers} workers x batch 64, 1 epoch, median of {a.repeat} runs")
    print(f"{'':<22}{'samples/s':>10}{'test acc':>10}{'RSS MiB (sum)':>15}")
    print(f"{'mt hub + workers':<22}{m_sps:>10.0f}{med(mt_runs, 'test_acc'):>10.4f}"
          f"{med(mt_runs, 'worker_rss_mib_sum'):>15.1f}  (+ hub {med(mt_runs, 'hub_rss_mib'):.1f})")
    print(f"{'torch DDP gloo':<22}{d_sps:>10.0f}{med(ddp_runs, 'test_acc'):>10.4f}{med(ddp_runs, 'rss_mib_sum'):>15.1f}")
    print(f"ratio mt / DDP samples/s: {m_sps / d_sps:.2f}")
    print(f"hub share of the step: {100 * med(mt_runs, 'hub_share'):.1f}% CPU for averaging, optimizer and "
          f"broadcast ({100 * med(mt_runs, 'hub_wall_share'):.1f}% in wall time, cores shared with the workers); "
          f"{100 * med(mt_runs, 'hub_process_share'):.1f}% counting the whole hub process (receiving included)")
    if a.json:
        json.dump({"mt": mt_runs, "ddp": ddp_runs, "ratio": m_sps / d_sps}, open(a.json, "w"), indent=2)


if __name__ == "__main__":
    main()
