#!/usr/bin/python3
"""The shared half of the mt-vs-PyTorch training benches (lenet_vs_torch.py,
mentee_vs_torch.py, mobilenet_vs_torch.py): data, both sides' runs, the
table, the JSON and the done-means check.

Both sides train the same network (mt's preset or .onnx; its twin in
torch_twins.py, parameter counts asserted equal) for the same number of SGD
steps (batch 64, lr 0.05, momentum 0.9) on the same data, each run in a
fresh process, at each thread setting. Runs alternate (round r: every
setting, mt and PyTorch in an order that flips each round) so machine noise
hits both alike; each setting's figure is the median of --repeat runs. Both
sides keep the data set as uint8 and convert one batch at a time, as mt does.

Run as a script, this file is the PyTorch side of one run (internal).
"""
import argparse
import gzip
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
BATCH, LR, MOMENTUM = 64, 0.05, 0.9
RECORD = 1 + 3 * 32 * 32  # CIFAR-10 binary: label byte, then R, G, B planes
FASHION_MNIST = "/usr/share/datasets/fashion-mnist"


class Bench:
    """One model's bench: what each side trains, on which data, and the
    issue's done-means (min speed ratio, max RSS ratio) or None."""

    def __init__(self, title, mt_model, arch, data_kind, steps, done=None):
        self.title, self.mt_model, self.arch = title, mt_model, arch
        self.data_kind, self.steps, self.done = data_kind, steps, done


# --- data --------------------------------------------------------------------

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
    """The CIFAR-10 binary training files in data (or its cifar-10-batches-bin)."""
    for d in (data, os.path.join(data, "cifar-10-batches-bin")):
        files = [os.path.join(d, f"data_batch_{i}.bin") for i in range(1, 6)]
        files = [f for f in files if os.path.exists(f)]
        if files:
            return files
    sys.exit(f"{data}: no data_batch_N.bin (CIFAR-10 binary)")


def read_idx(data, stem):
    """An IDX file (train-images-idx3-ubyte[.gz] ...) as a numpy uint8 array,
    read into place (no second copy to count in the peak RSS)."""
    import numpy as np
    for name in (stem, stem + ".gz"):
        path = os.path.join(data, name)
        if os.path.exists(path):
            with (gzip.open if name.endswith(".gz") else open)(path, "rb") as f:
                head = f.read(4)
                dims = [int.from_bytes(f.read(4), "big") for _ in range(head[3])]
                out = np.empty(dims, dtype=np.uint8)
                if f.readinto(memoryview(out).cast("B")) != out.size:
                    sys.exit(f"{path}: shorter than its header says")
            return out
    sys.exit(f"{data}: no {stem}[.gz] (IDX)")


def read_files(files):
    """The files' bytes, one after another, in one numpy uint8 array."""
    import numpy as np
    out = np.empty(sum(os.path.getsize(f) for f in files), dtype=np.uint8)
    pos = 0
    for path in files:
        with open(path, "rb") as f:
            pos += f.readinto(memoryview(out[pos:]).cast("B"))
    return out


def load_uint8(kind, data):
    """(images as uint8 N x C x H x W, labels as int64) of the training split."""
    import numpy as np
    import torch
    if kind == "idx":
        images = read_idx(data, "train-images-idx3-ubyte")
        labels = read_idx(data, "train-labels-idx1-ubyte")
        return torch.from_numpy(images).unsqueeze(1), torch.from_numpy(labels.astype(np.int64))
    rec = read_files(train_files(data))
    rec = rec[:len(rec) // RECORD * RECORD].reshape(-1, RECORD)
    # A strided view of the records: the pixels are not copied out.
    return torch.from_numpy(rec[:, 1:].reshape(-1, 3, 32, 32)), torch.from_numpy(rec[:, 0].astype(np.int64))


# --- PyTorch side (this file run as a script, one process per run) -----------

def torch_worker(argv):
    ap = argparse.ArgumentParser()
    for flag in ("--arch", "--kind", "--data"):
        ap.add_argument(flag, required=True)
    for flag in ("--steps", "--threads", "--seed"):
        ap.add_argument(flag, type=int, required=True)
    a = ap.parse_args(argv)
    import torch
    import torch.nn.functional as F
    sys.path.insert(0, HERE)
    import torch_twins

    torch.set_num_threads(a.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    torch.manual_seed(a.seed)
    images, labels = load_uint8(a.kind, a.data)
    n = len(labels)
    model = torch_twins.build(a.arch)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    order, pos, step_times, loss = torch.randperm(n), 0, [], None
    t0 = time.perf_counter()
    for _ in range(a.steps):
        ts = time.perf_counter()
        if pos + BATCH > n:
            order, pos = torch.randperm(n), 0
        idx = order[pos:pos + BATCH]
        pos += BATCH
        # mt's scaling: 2/255 x - 1, one batch at a time.
        x = images[idx].float().mul_(2.0 / 255.0).sub_(1.0)
        loss = F.cross_entropy(model(x), labels[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        step_times.append(time.perf_counter() - ts)
    total = time.perf_counter() - t0
    warm = step_times[min(5, len(step_times) - 1):]
    print(json.dumps({
        "threads": a.threads, "steps": a.steps, "samples": a.steps * BATCH, "train_seconds": total,
        "samples_per_s": a.steps * BATCH / total, "samples_per_s_after_5_steps": len(warm) * BATCH / sum(warm),
        "last_loss": float(loss), "parameters": torch_twins.parameter_count(model),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "torch": torch.__version__}))
    return 0


def run_torch(bench, a, data, threads):
    cmd = ["/usr/bin/python3", os.path.abspath(__file__), "--torch-worker", "--arch", bench.arch,
           "--kind", bench.data_kind, "--data", data, "--steps", str(a.steps), "--threads", str(threads),
           "--seed", str(a.seed)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"PyTorch at {threads} thread(s) failed (exit {p.returncode}):\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


# --- mt side -----------------------------------------------------------------

def mtworker_of(build):
    """The mtworker of a build tree (DIR/worker/mtworker), a folder holding
    one (DIR/mtworker, e.g. a saved binary), or the binary itself."""
    for exe in (os.path.join(build, "worker", "mtworker"), os.path.join(build, "mtworker"), build):
        if os.path.isfile(exe) and os.access(exe, os.X_OK):
            return os.path.abspath(exe)
    raise RuntimeError(f"no mtworker under {build} (deploy/build.sh, or pass --build DIR)")


def run_mt(bench, a, exe, data, threads):
    with tempfile.NamedTemporaryFile(suffix=".json") as rep:
        cmd = [exe, "--standalone", "--model", bench.mt_model, "--dataset", data, "--batch", str(BATCH),
               "--steps", str(a.steps), "--epochs", "0", "--optimizer", "sgd", "--lr", str(LR),
               "--momentum", str(MOMENTUM), "--threads", str(threads), "--seed", str(a.seed),
               "--report", rep.name, "--log-every", "3600"] + list(a.mt_flag or [])
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


# --- the bench ---------------------------------------------------------------

def make_parser(doc, bench):
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=bench.steps, help=f"SGD steps per run (default {bench.steps})")
    ap.add_argument("--threads", default="1,2,nproc", help="comma list; nproc = this machine's cores")
    ap.add_argument("--repeat", type=int, default=1, help="runs per side and setting (median)")
    ap.add_argument("--data", help="CIFAR-10 binary directory (default: synthetic)" if bench.data_kind == "cifar"
                    else f"IDX directory (default {FASHION_MNIST})")
    ap.add_argument("--build", action="append", metavar="DIR",
                    help="mt build tree, folder holding mtworker, or the binary; repeat to compare builds "
                         "in the same run (before first); default build")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mt-flag", action="append", metavar="FLAG",
                    help="one more mtworker argument, e.g. --mt-flag=--recompute (repeatable)")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--torch-only", action="store_true", help="skip mt")
    ap.add_argument("--check", action="store_true",
                    help="judge the issue's done-means on the last --build; exit 1 if they fail")
    return ap


def thread_settings(spec):
    nproc = os.cpu_count() or 1
    out = []
    for t in spec.split(","):
        t = nproc if t.strip() == "nproc" else int(t)
        if t not in out:
            out.append(t)
    return out


def median_row(runs):
    row = dict(runs[-1])
    for k in ("samples_per_s", "train_seconds", "peak_rss_mib"):
        row[k] = statistics.median(r[k] for r in runs)
    row["runs"] = [r["samples_per_s"] for r in runs]
    row["rss_runs"] = [r["peak_rss_mib"] for r in runs]
    return row


def measure(bench, a, exes, data, settings):
    """{"torch": {threads: [run]}, exe: {threads: [run]}}; an mt binary that
    fails is dropped with its error in errors[exe]."""
    runs = {side: {t: [] for t in settings} for side in ["torch"] + exes}
    errors = {}
    for r in range(a.repeat):
        for t in settings:
            sides = ["torch"] + [e for e in exes if e not in errors]
            for side in (sides if r % 2 else list(reversed(sides))):
                print(f"round {r + 1}/{a.repeat}, {t} thread(s): {'PyTorch' if side == 'torch' else side}",
                      file=sys.stderr, flush=True)
                try:
                    runs[side][t].append(run_torch(bench, a, data, t) if side == "torch"
                                         else run_mt(bench, a, side, data, t))
                except RuntimeError as e:
                    if side == "torch":
                        raise
                    errors[side] = str(e)
                    print(f"mt FAILED: {e}", file=sys.stderr, flush=True)
    return runs, errors


def compare(mt_rows, torch_rows):
    """Best of each side, speed ratio, RSS ratio at the best settings and the
    largest per-setting RSS ratio."""
    best_t = max(torch_rows, key=lambda r: r["samples_per_s"])
    best_m = max(mt_rows, key=lambda r: r["samples_per_s"])
    by_t = {r["threads"]: r for r in torch_rows}
    return {"best_mt": {k: best_m[k] for k in ("threads", "samples_per_s", "peak_rss_mib")},
            "best_torch": {k: best_t[k] for k in ("threads", "samples_per_s", "peak_rss_mib")},
            "speed_ratio": best_m["samples_per_s"] / best_t["samples_per_s"],
            "rss_ratio_best": best_m["peak_rss_mib"] / best_t["peak_rss_mib"],
            "rss_ratio_max": max(m["peak_rss_mib"] / by_t[m["threads"]]["peak_rss_mib"] for m in mt_rows)}


def check(bench, cmp):
    """(passed, line) for the issue's done-means; passed None when there are none.
    RSS is judged at the best settings and at every setting alike."""
    if bench.done is None:
        return None, f"{bench.title}: no done-means (report only)"
    speed, rss = bench.done
    # The larger of the RSS ratios: at the best settings and at each setting.
    worst_rss = max(cmp["rss_ratio_best"], cmp["rss_ratio_max"])
    ok_speed, ok_rss = cmp["speed_ratio"] >= speed, worst_rss <= rss
    return ok_speed and ok_rss, (
        f"{bench.title}: speed {cmp['speed_ratio']:.2f}x (needs >= {speed:g}x) {'ok' if ok_speed else 'FAILS'}; "
        f"peak RSS mt / torch {worst_rss:.3f} at worst (needs <= {rss:.3f}) {'ok' if ok_rss else 'FAILS'}")


def print_table(bench, a, settings, torch_rows, builds):
    print(f"\n{bench.title}: {torch_rows[0]['parameters']} parameters, batch {BATCH}, {a.steps} SGD steps, "
          f"{a.data_label} data, median of {a.repeat}, {os.cpu_count()} cores, load average "
          f"{a.load[0]:.1f} before, {a.load[1]:.1f} after")
    if not builds:
        for t in torch_rows:
            print(f"{t['threads']:>7} thread(s) | torch {t['samples_per_s']:.0f} samples/s, "
                  f"peak RSS {t['peak_rss_mib']:.1f} MiB (mt skipped)")
    for b in builds:
        print(f"mt = {b['binary']}" + (f"  FAILED: {b['error']}" if b.get("error") else ""))
        if b.get("error"):
            continue
        print(f"{'threads':>7} | {'mt samples/s':>12} {'torch samples/s':>15} {'ratio':>6} | "
              f"{'mt RSS MiB':>10} {'torch RSS MiB':>13} {'ratio':>6}")
        mt_by_t = {r["threads"]: r for r in b["rows"]}
        for t in torch_rows:
            m = mt_by_t[t["threads"]]
            print(f"{t['threads']:>7} | {m['samples_per_s']:>12.0f} {t['samples_per_s']:>15.0f} "
                  f"{m['samples_per_s'] / t['samples_per_s']:>6.2f} | {m['peak_rss_mib']:>10.1f} "
                  f"{t['peak_rss_mib']:>13.1f} {m['peak_rss_mib'] / t['peak_rss_mib']:>6.3f}")
        bm, bt = b["best_mt"], b["best_torch"]
        print(f"best mt {bm['samples_per_s']:.0f} samples/s ({bm['threads']} thread(s)), best torch "
              f"{bt['samples_per_s']:.0f} ({bt['threads']} thread(s)): speed {b['speed_ratio']:.2f}x; peak RSS "
              f"{bm['peak_rss_mib']:.1f} vs {bt['peak_rss_mib']:.1f} MiB: {b['rss_ratio_best']:.3f} "
              f"(largest over settings {b['rss_ratio_max']:.3f})")


def run(bench, a):
    if a.steps < 1 or a.repeat < 1:
        sys.exit("--steps and --repeat must be at least 1")
    settings = thread_settings(a.threads)
    builds = a.build or [os.path.join(ROOT, "build")]
    exes = [] if a.torch_only else [mtworker_of(b) for b in builds]
    tmp, data = None, a.data
    if not data and bench.data_kind == "cifar":
        tmp = data = tempfile.mkdtemp(prefix="mt-vs-torch-")
        write_synthetic(data, train=max(BATCH * a.steps, 2048), test=256)
    data = os.path.abspath(data or FASHION_MNIST)
    a.data_label = "synthetic CIFAR-shaped" if tmp else data
    load = os.getloadavg()[0]
    try:
        runs, errors = measure(bench, a, exes, data, settings)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    # Other work on the machine skews PyTorch's multi-thread runs most: say how busy it was.
    a.load = (load, os.getloadavg()[0])

    torch_rows = [median_row(runs["torch"][t]) for t in settings]
    builds_out = []
    for exe in exes:
        b = {"binary": exe}
        if exe in errors:
            b["error"] = errors[exe]
        else:
            b["rows"] = [median_row(runs[exe][t]) for t in settings]
            if b["rows"][0]["parameters"] != torch_rows[0]["parameters"]:
                b["error"] = (f"parameter counts differ: mt {b['rows'][0]['parameters']}, PyTorch twin "
                              f"{torch_rows[0]['parameters']}: the twin is not the same network")
            else:
                b.update(compare(b["rows"], torch_rows))
        builds_out.append(b)
    print_table(bench, a, settings, torch_rows, builds_out)
    result = {"model": bench.title, "mt_model": bench.mt_model, "torch_arch": bench.arch, "batch": BATCH,
              "steps": a.steps, "lr": LR, "momentum": MOMENTUM, "data": a.data_label, "cores": os.cpu_count(),
              "repeat": a.repeat, "load_average_1min": a.load, "torch": torch_rows,
              "best_torch": {k: max(torch_rows, key=lambda r: r["samples_per_s"])[k]
                             for k in ("threads", "samples_per_s", "peak_rss_mib")},
              "builds": builds_out, "done_means": bench.done}
    status = 1 if any(b.get("error") for b in builds_out) else 0
    if a.check and builds_out and not builds_out[-1].get("error"):
        passed, line = check(bench, builds_out[-1])
        print(line)
        result["check"] = passed
        if passed is False:
            status = 1
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
    return status


def main(bench, doc, argv=None):
    return run(bench, make_parser(doc, bench).parse_args(argv))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--torch-worker"]:
        sys.exit(torch_worker(sys.argv[2:]))
    sys.exit("vs_torch.py is the shared half of lenet_vs_torch.py, mentee_vs_torch.py and mobilenet_vs_torch.py")
