#!/usr/bin/python3
"""Two builds of mt, same machine, one run: is a change slower?

Runs LeNet-5 on Fashion-MNIST standalone (`mtworker --standalone --threads 1`)
and as a loopback cluster (`mthub` with three `mtworker --threads 1`, 64
samples each per step) with build A and build B, alternating A and B so machine
noise hits both alike, and prints the medians of samples/s and peak RSS with
the ratio B/A. Build a baseline from an older commit with, e.g.,

  git worktree add /tmp/mt-base <commit> && MT_BUILD_DIR=build /tmp/mt-base/deploy/build.sh

  tests/bench/build_vs_build.py --a /tmp/mt-base/build --b build [--repeat 3]
      [--standalone-steps 900] [--cluster-steps 300] [--json out.json]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time


def standalone(build, steps):
    with tempfile.TemporaryDirectory() as out:
        report = os.path.join(out, "r.json")
        subprocess.run([os.path.join(build, "worker", "mtworker"), "--standalone", "--threads", "1", "--batch", "64",
                        "--steps", str(steps), "--log-every", "60", "--report", report],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        r = json.load(open(report))
    return {"samples_per_s": r["samples"] / r["train_seconds"], "peak_rss_mib": r["peak_rss_bytes"] / 2**20}


def cluster(build, steps, workers=3):
    with tempfile.TemporaryDirectory() as out:
        port_file, report = os.path.join(out, "port"), os.path.join(out, "hub.json")
        hub = subprocess.Popen([os.path.join(build, "hub", "mthub"), "--workers", str(workers), "--bind", "127.0.0.1",
                                "--port", "0", "--port-file", port_file, "--steps", str(steps), "--log-every", "60",
                                "--report", report], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs = [hub]
        try:
            for _ in range(300):
                if os.path.exists(port_file) and open(port_file).read().strip():
                    break
                time.sleep(0.1)
            port = open(port_file).read().strip()
            for i in range(workers):
                procs.append(subprocess.Popen([os.path.join(build, "worker", "mtworker"), "--hub", f"127.0.0.1:{port}",
                                               "--threads", "1", "--name", f"w{i}"],
                                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            if hub.wait(timeout=600) != 0:
                raise RuntimeError(f"hub of {build} failed")
            for p in procs[1:]:
                p.wait(timeout=60)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
        r = json.load(open(report))
    return {"samples_per_s": r["samples_per_second"], "peak_rss_mib": r["peak_rss_bytes"] / 2**20}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--a", required=True, help="baseline build directory")
    ap.add_argument("--b", required=True, help="build directory to compare with it")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--standalone-steps", type=int, default=900)
    ap.add_argument("--cluster-steps", type=int, default=300)
    ap.add_argument("--json")
    a = ap.parse_args()
    runs = {(job, b): [] for job in ("standalone", "cluster") for b in ("a", "b")}
    for _ in range(a.repeat):
        for which, build in (("a", a.a), ("b", a.b)):
            runs[("standalone", which)].append(standalone(build, a.standalone_steps))
            runs[("cluster", which)].append(cluster(build, a.cluster_steps))
    result = {}
    print(f"{'job':<12}{'metric':<16}{'A':>12}{'B':>12}{'B/A':>8}")
    for job in ("standalone", "cluster"):
        for metric in ("samples_per_s", "peak_rss_mib"):
            va = statistics.median(r[metric] for r in runs[(job, "a")])
            vb = statistics.median(r[metric] for r in runs[(job, "b")])
            result[f"{job}.{metric}"] = {"a": va, "b": vb, "ratio": vb / va}
            print(f"{job:<12}{metric:<16}{va:>12.1f}{vb:>12.1f}{vb / va:>8.3f}")
    if a.json:
        json.dump({"runs": {f"{k[0]}.{k[1]}": v for k, v in runs.items()}, "medians": result}, open(a.json, "w"),
                  indent=2)


if __name__ == "__main__":
    main()
