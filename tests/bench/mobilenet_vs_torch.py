#!/usr/bin/python3
"""MobileNetV2-style training: mtworker --standalone vs PyTorch, same machine, one run.

Trains the same network for a fixed number of SGD steps (batch 64, lr 0.05,
momentum 0.9) on the same CIFAR-shaped data, in PyTorch at several thread
settings (1, 2, nproc; each in a fresh process) and in mt at the same
settings, alternating the two so machine noise hits both alike. Prints
samples/s of each, the best of each side and the ratio best mt / best
PyTorch, and writes a JSON result.

  tests/bench/mobilenet_vs_torch.py [--model FILE.onnx|mobilenet-tiny] [--steps 60]
      [--threads 1,2,nproc] [--repeat 1] [--data DIR] [--build build] [--json out.json]
      [--torch-only]

--model: default tests/onnx/fixtures/mobilenet_v2_style.onnx, whose
architecture is mobilenet-v2-style of tests/bench/mobilenet_tiny_torch.py
(PyTorch trains that twin; mt loads the .onnx); mobilenet-tiny is mt's
preset and the PyTorch twin of the same name.
--data: a directory of CIFAR-10 binary files (data_batch_1.bin ...,
test_batch.bin); default: synthetic CIFAR-shaped data written to a temporary
directory (a learnable 10-class task), read by both sides.

mt failing (for example a build without .onnx support) is reported as such
and the PyTorch half still printed; the exit status is then 1.
Needs PyTorch (deploy/install-deps.sh --bench) and, for mt, a built tree.
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_MODEL = os.path.join(ROOT, "tests", "onnx", "fixtures", "mobilenet_v2_style.onnx")
BATCH, LR, MOMENTUM = 64, 0.05, 0.9
RECORD = 1 + 3 * 32 * 32  # CIFAR-10 binary: label byte, then R, G, B planes


def torch_arch(model):
    """The mobilenet_tiny_torch.py architecture that matches --model."""
    if model == "mobilenet-tiny":
        return "mobilenet-tiny"
    base = os.path.basename(model)
    if base.startswith("mobilenet_v2_style") or model == "mobilenet-v2-style":
        return "mobilenet-v2-style"
    if base.startswith("mobilenet_tiny"):
        return "mobilenet-tiny"
    sys.exit(f"no PyTorch twin known for --model {model} (mobilenet-tiny, or a mobilenet_v2_style*.onnx "
             "or mobilenet_tiny*.onnx fixture)")


def write_synthetic(dirname, train, test, seed=0):
    """CIFAR-10 binary files of a learnable task: each class a smooth
    pattern plus noise, as uint8. Standard library only (random)."""
    import random
    rng = random.Random(seed)
    templates = [[rng.gauss(0, 1) for _ in range(3 * 4 * 4)] for _ in range(10)]

    def sample():
        y = rng.randrange(10)
        t = templates[y]
        out = bytearray([y])
        for c in range(3):
            for i in range(32):
                for j in range(32):
                    v = t[c * 16 + (i // 8) * 4 + j // 8] * 0.6 + rng.gauss(0, 0.25)
                    out.append(max(0, min(255, int(128 + 100 * v))))
        return bytes(out)

    # Draw a pool and repeat it: the bench times steps, not generalisation.
    pool = [sample() for _ in range(512)]
    for name, n in (("data_batch_1.bin", train), ("test_batch.bin", test)):
        with open(os.path.join(dirname, name), "wb") as f:
            for k in range(n):
                f.write(pool[(k * 7919 + (1 if name.startswith("test") else 0)) % len(pool)])


def train_files(data):
    files = [os.path.join(data, f"data_batch_{i}.bin") for i in range(1, 6)]
    files = [f for f in files if os.path.exists(f)]
    if not files:
        sys.exit(f"{data}: no data_batch_N.bin (CIFAR-10 binary)")
    return files


# --- PyTorch side (runs in a child process per thread setting) ---------------

def torch_worker(args):
    import torch
    import torch.nn.functional as F
    sys.path.insert(0, HERE)
    import mobilenet_tiny_torch

    torch.set_num_threads(args.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    torch.manual_seed(args.seed)
    raw = b"".join(open(f, "rb").read() for f in train_files(args.data))
    n = len(raw) // RECORD
    rec = torch.frombuffer(bytearray(raw[:n * RECORD]), dtype=torch.uint8).view(n, RECORD)
    labels = rec[:, 0].long()
    # mt's scaling: 2/255 x - 1.
    images = rec[:, 1:].float().mul_(2.0 / 255.0).sub_(1.0).view(n, 3, 32, 32)

    model = mobilenet_tiny_torch.build(args.arch)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    order = torch.randperm(n)
    pos = 0
    step_times = []
    t0 = time.perf_counter()
    loss = None
    for _ in range(args.steps):
        ts = time.perf_counter()
        if pos + BATCH > n:
            order, pos = torch.randperm(n), 0
        idx = order[pos:pos + BATCH]
        pos += BATCH
        x, y = images[idx], labels[idx]
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        step_times.append(time.perf_counter() - ts)
    total = time.perf_counter() - t0
    warm = step_times[min(5, len(step_times) - 1):]
    print(json.dumps({
        "threads": args.threads, "steps": args.steps, "samples": args.steps * BATCH, "train_seconds": total,
        "samples_per_s": args.steps * BATCH / total,
        "samples_per_s_after_5_steps": len(warm) * BATCH / sum(warm),
        "last_loss": float(loss), "parameters": mobilenet_tiny_torch.parameter_count(model),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "torch": torch.__version__}))


def run_torch(a, arch, data, threads):
    cmd = ["/usr/bin/python3", os.path.abspath(__file__), "--torch-worker", "--arch", arch, "--data", data,
           "--steps", str(a.steps), "--threads-one", str(threads), "--seed", str(a.seed)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"PyTorch at {threads} thread(s) failed (exit {p.returncode}):\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


# --- mt side -----------------------------------------------------------------

def run_mt(a, data, threads):
    exe = os.path.join(a.build, "worker", "mtworker")
    if not os.access(exe, os.X_OK):
        raise RuntimeError(f"{exe} is not built (deploy/build.sh)")
    model = a.model if a.model == "mobilenet-tiny" or not os.path.exists(a.model) else os.path.abspath(a.model)
    with tempfile.NamedTemporaryFile(suffix=".json") as rep:
        cmd = [exe, "--standalone", "--model", model, "--dataset", data, "--batch", str(BATCH),
               "--steps", str(a.steps), "--epochs", "0", "--optimizer", "sgd", "--lr", str(LR), "--momentum", str(MOMENTUM),
               "--threads", str(threads), "--seed", str(a.seed), "--report", rep.name, "--log-every", "60"]
        env = dict(os.environ)
        env["MT_ALLOW_DATA"] = ":".join(x for x in (env.get("MT_ALLOW_DATA"), data) if x)
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if p.returncode != 0:
            tail = "\n".join((p.stderr or p.stdout).strip().splitlines()[-8:])
            raise RuntimeError(f"mtworker exited {p.returncode}: {' '.join(cmd)}\n{tail}")
        r = json.load(open(rep.name))
    return {"threads": threads, "steps": r.get("steps"), "samples": r["samples"],
            "train_seconds": r["train_seconds"], "samples_per_s": r["samples"] / r["train_seconds"],
            "last_loss": r.get("last_step_loss"), "parameters": r.get("parameters"),
            "peak_rss_mib": r["peak_rss_bytes"] / 2**20}


def median_row(runs):
    row = dict(runs[-1])
    for k in ("samples_per_s", "train_seconds", "peak_rss_mib"):
        row[k] = statistics.median(r[k] for r in runs)
    row["runs"] = [r["samples_per_s"] for r in runs]
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=DEFAULT_MODEL, help="an .onnx fixture or mobilenet-tiny")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--threads", default="1,2,nproc", help="comma list; nproc = this machine's cores")
    ap.add_argument("--repeat", type=int, default=1, help="runs per side and setting (median)")
    ap.add_argument("--data", help="CIFAR-10 binary directory (default: synthetic)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--torch-only", action="store_true", help="skip mt")
    # internal: one PyTorch run in this process
    ap.add_argument("--torch-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--arch", help=argparse.SUPPRESS)
    ap.add_argument("--threads-one", type=int, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.torch_worker:
        a.threads = a.threads_one
        return torch_worker(a)
    if a.steps < 1:
        sys.exit("--steps must be at least 1")

    arch = torch_arch(a.model)
    nproc = os.cpu_count() or 1
    settings = []
    for t in a.threads.split(","):
        t = nproc if t.strip() == "nproc" else int(t)
        if t not in settings:
            settings.append(t)

    tmp = None
    data = a.data
    if not data:
        tmp = tempfile.mkdtemp(prefix="mt-mobilenet-bench-")
        data = tmp
        write_synthetic(data, train=max(BATCH * a.steps, 2048), test=256)
    data = os.path.abspath(data)

    torch_rows, mt_rows, mt_error = [], [], None
    try:
        for t in settings:
            t_runs, m_runs = [], []
            for i in range(a.repeat):
                print(f"threads {t}: run {i + 1}/{a.repeat}", file=sys.stderr, flush=True)
                if not a.torch_only and mt_error is None:
                    try:
                        m_runs.append(run_mt(a, data, t))
                    except RuntimeError as e:
                        mt_error = str(e)
                        print(f"mt FAILED: {mt_error}", file=sys.stderr, flush=True)
                t_runs.append(run_torch(a, arch, data, t))
            torch_rows.append(median_row(t_runs))
            if m_runs:
                mt_rows.append(median_row(m_runs))
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)

    best_torch = max(torch_rows, key=lambda r: r["samples_per_s"])
    best_mt = max(mt_rows, key=lambda r: r["samples_per_s"]) if mt_rows and not mt_error else None
    print(f"\n{arch} ({os.path.basename(a.model)}), {torch_rows[0]['parameters']} parameters, batch {BATCH}, "
          f"{a.steps} SGD steps, {'synthetic' if tmp else data} data, median of {a.repeat}, {nproc} cores")
    print(f"{'threads':>7} | {'mt samples/s':>12} {'torch samples/s':>15} {'(after 5 steps)':>15} | "
          f"{'mt RSS MiB':>10} {'torch RSS MiB':>13}")
    mt_by_t = {r["threads"]: r for r in mt_rows}
    for r in torch_rows:
        m = mt_by_t.get(r["threads"])
        ms = f"{m['samples_per_s']:>12.0f}" if m else f"{'-':>12}"
        mr = f"{m['peak_rss_mib']:>10.1f}" if m else f"{'-':>10}"
        print(f"{r['threads']:>7} | {ms} {r['samples_per_s']:>15.0f} {r['samples_per_s_after_5_steps']:>15.0f} | "
              f"{mr} {r['peak_rss_mib']:>13.1f}")
    result = {"model": a.model, "arch": arch, "batch": BATCH, "steps": a.steps, "lr": LR, "momentum": MOMENTUM,
              "data": "synthetic" if tmp else data, "cores": nproc, "repeat": a.repeat, "torch": torch_rows,
              "best_torch": {"threads": best_torch["threads"], "samples_per_s": best_torch["samples_per_s"]}}
    if a.torch_only:
        print(f"best torch: {best_torch['samples_per_s']:.0f} samples/s at {best_torch['threads']} thread(s); "
              "mt skipped (--torch-only)")
        result["mt"] = None
    elif best_mt:
        ratio = best_mt["samples_per_s"] / best_torch["samples_per_s"]
        print(f"best mt {best_mt['samples_per_s']:.0f} samples/s ({best_mt['threads']} thread(s)) / best torch "
              f"{best_torch['samples_per_s']:.0f} ({best_torch['threads']} thread(s)): ratio {ratio:.2f}")
        result.update({"mt": mt_rows, "best_mt": {"threads": best_mt["threads"],
                                                   "samples_per_s": best_mt["samples_per_s"]}, "ratio": ratio})
    else:
        print(f"best torch: {best_torch['samples_per_s']:.0f} samples/s at {best_torch['threads']} thread(s); "
              f"mt FAILED, no ratio:\n{mt_error}")
        result.update({"mt": None, "mt_error": mt_error, "ratio": None})
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
    return 1 if (mt_error and not a.torch_only) else 0


if __name__ == "__main__":
    sys.exit(main())
