#!/usr/bin/python3
"""How far one hub goes: a real mthub against 16, 64, 256 simulated workers.

The workers are `sim_workers` (tests/bench/sim_workers.cc): N fake workers
in one process, each on its own connection over 127.0.0.1, answering every
assignment at once with a fixed gradient and computing nothing, so the
hub's own costs are what is measured. Per model and worker count it runs
`--steps` synchronous steps (--sync-every 1, fixed batches of --batch per
worker, no evaluation but the final one on a 100-sample test set), samples
the hub's RSS from /proc every 0.5 s, and reads the hub's --report:
steps/s, hub CPU per worker-step (the hub process's CPU during the step
loop, evaluation excluded: `hub_process_share` x `train_seconds`), bytes
per step each way, RSS at 10%/50%/100% of the run and its peak.

It also times one real training step per model (`mtworker --standalone
--threads 1 --batch 64`) on this machine, the compute a worker spends per
step, to say how many workers one hub serves before it doubles the step.

Datasets are made in a temporary directory: the training files are sparse
(the hub only reads their headers), sized so the run stays in one epoch.

  tests/bench/hub_load.py [--models lenet5,mentee] [--workers 16,64,256] [--steps 1000]
                          [--max-run-seconds 300] [--aggregate auto] [--tls] [--build build] [--json out.json]
"""
import argparse
import json
import os
import random
import struct
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEST_SAMPLES = 100


def write_idx(d, train_n):
    """LeNet-5's data: IDX, a sparse training set of train_n, 100 test samples."""
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "train-images-idx3-ubyte"), "wb") as f:
        f.write(struct.pack(">IIII", 0x803, train_n, 28, 28))
        f.truncate(16 + train_n * 784)
    with open(os.path.join(d, "train-labels-idx1-ubyte"), "wb") as f:
        f.write(struct.pack(">II", 0x801, train_n))
        f.truncate(8 + train_n)
    rng = random.Random(1)
    with open(os.path.join(d, "t10k-images-idx3-ubyte"), "wb") as f:
        f.write(struct.pack(">IIII", 0x803, TEST_SAMPLES, 28, 28))
        f.write(rng.randbytes(TEST_SAMPLES * 784))
    with open(os.path.join(d, "t10k-labels-idx1-ubyte"), "wb") as f:
        f.write(struct.pack(">II", 0x801, TEST_SAMPLES))
        f.write(bytes(rng.randrange(10) for _ in range(TEST_SAMPLES)))


def write_cifar(d, train_n, dense=False):
    """The largest preset's data: CIFAR-10 binary (1 label byte + 3072 pixels)."""
    os.makedirs(d, exist_ok=True)
    rng = random.Random(2)
    record = lambda: bytes([rng.randrange(10)]) + rng.randbytes(3072)
    with open(os.path.join(d, "data_batch_1.bin"), "wb") as f:
        if dense:
            for _ in range(train_n):
                f.write(record())
        else:
            f.truncate(train_n * 3073)  # all zero: label 0, black images
    with open(os.path.join(d, "test_batch.bin"), "wb") as f:
        for _ in range(TEST_SAMPLES):
            f.write(record())


def proc_rss(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def sample_rss(pid, out, stop):
    t0 = time.monotonic()
    while not stop.is_set():
        rss = proc_rss(pid)
        if rss is not None:
            out.append((time.monotonic() - t0, rss))
        stop.wait(0.5)


def wait_port(port_file, proc):
    for _ in range(600):
        if os.path.exists(port_file) and open(port_file).read().strip():
            return open(port_file).read().strip()
        if proc.poll() is not None:
            sys.exit("hub exited before listening")
        time.sleep(0.1)
    sys.exit("hub did not start")


def run_load(a, model, dataset, workers, steps, tmp):
    out = tempfile.mkdtemp(dir=tmp)
    port_file, report = os.path.join(out, "port"), os.path.join(out, "hub.json")
    hub_cmd = [os.path.join(a.build, "hub", "mthub"), "--workers", str(workers), "--bind", "127.0.0.1",
               "--port", "0", "--port-file", port_file, "--model", model, "--dataset", dataset,
               "--global-batch", str(a.batch * workers), "--batch-policy", "fixed", "--sync-every", "1",
               "--steps", str(steps), "--eval-every", "0", "--step-deadline", "600", "--lr", "0.01",
               "--log-every", "60", "--report", report, "--aggregate", a.aggregate]
    hub_cmd += ["--state-dir", os.path.join(out, "state")] if a.tls else ["--insecure"]
    hub = subprocess.Popen(hub_cmd, stdout=open(os.path.join(out, "hub.log"), "w"), stderr=subprocess.STDOUT)
    sim = None
    samples, stop = [], threading.Event()
    sampler = threading.Thread(target=sample_rss, args=(hub.pid, samples, stop))
    try:
        port = wait_port(port_file, hub)
        sim_cmd = [os.path.join(a.build, "tests", "bench", "sim_workers"), "--hub", f"127.0.0.1:{port}",
                   "--workers", str(workers)]
        sim_cmd += ["--known-hubs", os.path.join(out, "known_hubs")] if a.tls else ["--insecure"]
        sampler.start()
        started = time.monotonic()
        sim = subprocess.Popen(sim_cmd, stdout=subprocess.PIPE, stderr=open(os.path.join(out, "sim.log"), "w"),
                               text=True)
        rc = hub.wait(timeout=a.timeout)
        wall = time.monotonic() - started
        sim_out, _ = sim.communicate(timeout=60)
    finally:
        stop.set()
        for p in (hub, sim):
            if p and p.poll() is None:
                p.kill()
                p.wait()
    if sampler.is_alive():
        sampler.join()
    if not os.path.exists(report):
        sys.exit(f"hub wrote no report (rc {rc}); see {out}/hub.log")
    r = json.load(open(report))
    n = r["steps"]
    rss = [s[1] for s in samples]
    at = lambda frac: rss[min(len(rss) - 1, int(frac * (len(rss) - 1)))] if rss else 0
    step_cpu = r["hub_process_share"] * r["train_seconds"]
    return {
        "model": model, "workers": workers, "steps": n, "hub_rc": rc, "wall_s": wall,
        "train_seconds": r["train_seconds"], "steps_per_s": n / r["train_seconds"],
        "hub_cpu_s": step_cpu,
        "hub_cpu_ms_per_step": 1e3 * step_cpu / n,
        "hub_cpu_ms_per_worker_step": 1e3 * step_cpu / (n * workers),
        "hub_own_ms_per_step": 1e3 * r["hub_share"] * r["train_seconds"] / n,
        "reduce_ms_per_step": 1e3 * r["hub_reduce_seconds"] / n,
        "bytes_in_per_step": r["gradient_bytes_in"] / n, "bytes_out_per_step": r["result_bytes_out"] / n,
        "rss_10": at(0.1), "rss_50": at(0.5), "rss_100": at(1.0), "rss_peak": max(rss) if rss else 0,
        "report_peak_rss": r.get("peak_rss_bytes"), "parameters": r["parameters"],
        "sim": json.loads(sim_out.strip().splitlines()[-1]) if sim_out.strip() else None,
    }


def compute_ms(a, model, dataset, steps=100):
    """One worker's compute for a batch of 64 on one core: ms per step."""
    with tempfile.TemporaryDirectory() as out:
        rep = os.path.join(out, "w.json")
        cmd = [os.path.join(a.build, "worker", "mtworker"), "--standalone", "--model", model, "--dataset",
               dataset, "--threads", "1", "--batch", "64", "--steps", str(steps), "--log-every", "60",
               "--report", rep]
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if run.returncode != 0:
            sys.exit(f"standalone failed: {(run.stdout + run.stderr)[-1500:]}")
        r = json.load(open(rep))
        return 1e3 * r["train_seconds"] / r["steps"]


def mib(b):
    return f"{b / 2**20:.1f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="lenet5,mentee")
    ap.add_argument("--workers", default="16,64,256")
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=4, help="samples per worker per step (the hub's cost ignores it)")
    ap.add_argument("--max-run-seconds", type=float, default=300,
                    help="fewer steps where --steps would take longer (estimated from a 10-step run)")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--aggregate", default="auto", help="the hub's --aggregate (auto: its default)")
    ap.add_argument("--tls", action="store_true", help="TLS (trust on first use) instead of --insecure")
    ap.add_argument("--no-compute", action="store_true", help="skip timing the real per-step compute")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--json")
    a = ap.parse_args()
    models = [m for m in a.models.split(",") if m]
    counts = [int(w) for w in a.workers.split(",") if w]
    results, compute = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        train_n = max(60000, a.batch * max(counts) * (a.steps + 10))
        data = {"lenet5": os.path.join(tmp, "idx"), "mentee": os.path.join(tmp, "cifar")}
        write_idx(data["lenet5"], train_n)
        write_cifar(data["mentee"], train_n)
        for model in models:
            if not a.no_compute:
                real = os.path.join(tmp, f"real-{model}")
                if model == "lenet5":
                    real = "fashion-mnist" if os.path.isdir("/usr/share/datasets/fashion-mnist") else real
                if not os.path.isdir(real) and real != "fashion-mnist":
                    (write_idx if model == "lenet5" else lambda d, n: write_cifar(d, n, dense=True))(real, 7000)
                compute[model] = compute_ms(a, model, real)
                print(f"{model}: compute {compute[model]:.2f} ms per batch-64 step on one core", file=sys.stderr)
            for w in counts:
                steps = a.steps
                probe = run_load(a, model, data[model], w, 10, tmp)
                per_step = probe["train_seconds"] / probe["steps"]
                if per_step * a.steps > a.max_run_seconds:
                    steps = max(20, int(a.max_run_seconds / per_step) // 10 * 10)
                print(f"{model} x{w}: {steps} steps (probe {1e3 * per_step:.1f} ms/step)", file=sys.stderr,
                      flush=True)
                res = run_load(a, model, data[model], w, steps, tmp)
                results.append(res)
                print(json.dumps(res), file=sys.stderr, flush=True)
    print(f"\n{'plaintext' if not a.tls else 'TLS'}, --aggregate {a.aggregate}, hub and {'+'.join(models)} simulated workers on 127.0.0.1")
    print("| model | workers | steps | steps/s | hub CPU ms/step | hub CPU ms/worker-step | MiB in/step | "
          "MiB out/step | hub RSS MiB 10%/50%/100%/peak | left out |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['model']} | {r['workers']} | {r['steps']} | {r['steps_per_s']:.1f} | "
              f"{r['hub_cpu_ms_per_step']:.2f} | {r['hub_cpu_ms_per_worker_step']:.3f} | "
              f"{mib(r['bytes_in_per_step'])} | {mib(r['bytes_out_per_step'])} | "
              f"{mib(r['rss_10'])} / {mib(r['rss_50'])} / {mib(r['rss_100'])} / {mib(r['rss_peak'])} | "
              f"{(r['sim'] or {}).get('left_out')} |")
    for model, ms in compute.items():
        per = [r["hub_cpu_ms_per_worker_step"] for r in results if r["model"] == model]
        if per:
            worst = max(per)
            print(f"{model}: compute {ms:.2f} ms/step (batch 64, one core); hub CPU up to {worst:.3f} ms per "
                  f"worker-step -> one hub core keeps the step within 2x up to {int(ms / worst)} workers")
    if a.json:
        json.dump({"args": vars(a), "compute_ms": compute, "results": results}, open(a.json, "w"), indent=2)


if __name__ == "__main__":
    main()
