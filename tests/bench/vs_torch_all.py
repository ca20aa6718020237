#!/usr/bin/python3
"""LeNet-5, Mentee, the MobileNetV2-style model and mobilenet-tiny against
PyTorch, one after another, and the markdown table for docs/benchmarks.md.

Runs lenet_vs_torch.py, mentee_vs_torch.py and mobilenet_vs_torch.py (the
.onnx fixture, then --model mobilenet-tiny), each alternating mt and
PyTorch in fresh processes at thread settings 1, 2, nproc, median of
--repeat (tests/bench/vs_torch.py), and prints one table row per
model and mt build: best samples/s of each side with its thread setting, the
speed ratio, peak RSS of each side at its best setting, and the RSS ratio
there and the largest over settings.

  tests/bench/vs_torch_all.py [--repeat 3] [--scale 1] [--build DIR ...]
      [--threads 1,2,nproc] [--cifar DIR] [--idx DIR] [--out DIR] [--check]
      [--only lenet,mentee,mobilenet,mobilenet-tiny]

--scale: multiplies each bench's default steps (LeNet-5 900, Mentee 60,
MobileNets 60); 0.05 for a quick look.
--build: as the benches take it; repeat (before first) to compare builds
against the same PyTorch runs.
--out: where the JSON results go (one per model) (default: not kept).
--check: judge the issue's done-means (on the last --build); exit 1 if any
model fails them.
"""
import argparse
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import lenet_vs_torch  # noqa: E402
import mentee_vs_torch  # noqa: E402
import mobilenet_vs_torch  # noqa: E402
import vs_torch  # noqa: E402


def bench_runs(a):
    """(name, main(argv), default steps, data flag) of each bench."""
    return [
        ("lenet", lambda argv: vs_torch.main(lenet_vs_torch.BENCH, lenet_vs_torch.__doc__, argv),
         lenet_vs_torch.BENCH.steps, a.idx),
        ("mentee", lambda argv: vs_torch.main(mentee_vs_torch.BENCH, mentee_vs_torch.__doc__, argv),
         mentee_vs_torch.BENCH.steps, a.cifar),
        ("mobilenet", mobilenet_vs_torch.main, 60, a.cifar),
        ("mobilenet-tiny", lambda argv: mobilenet_vs_torch.main(argv + ["--model", "mobilenet-tiny"]), 60, a.cifar),
    ]


def build_label(binary):
    """The build a binary comes from: its tree (or folder), relative to the checkout when inside it."""
    folder = os.path.dirname(binary)
    if os.path.basename(folder) == "worker":
        folder = os.path.dirname(folder)
    rel = os.path.relpath(folder, vs_torch.ROOT)
    return folder if rel.startswith("..") else rel


def per_setting(rows):
    return " / ".join(f"{r['samples_per_s']:,.0f}" for r in rows)


def markdown(results):
    threads = " / ".join(str(r["threads"]) for r in results[0]["torch"])
    lines = [f"| model | mt build | mt samples/s ({threads} threads) | PyTorch samples/s ({threads}) "
             "| best mt / best PyTorch | peak RSS mt / PyTorch (at the best settings) "
             "| RSS ratio (at best; largest over settings) |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        for b in r["builds"]:
            name = build_label(b["binary"])
            if b.get("error"):
                lines.append(f"| {r['model']} | {name} | failed | {per_setting(r['torch'])} | | | |")
                continue
            m, t = b["best_mt"], b["best_torch"]
            lines.append(
                f"| {r['model']} | {name} | {per_setting(b['rows'])} | {per_setting(r['torch'])} | "
                f"**{b['speed_ratio']:.2f}x** ({m['threads']} vs {t['threads']} threads) | "
                f"{m['peak_rss_mib']:.0f} / {t['peak_rss_mib']:.0f} MiB | "
                f"**{b['rss_ratio_best']:.3f}**; {b['rss_ratio_max']:.3f} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies each bench's default steps")
    ap.add_argument("--build", action="append", metavar="DIR")
    ap.add_argument("--threads", default="1,2,nproc")
    ap.add_argument("--cifar", help="CIFAR-10 binary directory (default: synthetic)")
    ap.add_argument("--idx", help="Fashion-MNIST IDX directory (default: the benches')")
    ap.add_argument("--out", help="keep the JSON results here")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--only", help="comma list of lenet, mentee, mobilenet, mobilenet-tiny (default all)")
    a = ap.parse_args()
    out = a.out or tempfile.mkdtemp(prefix="mt-vs-torch-all-")
    os.makedirs(out, exist_ok=True)
    results, status = [], 0
    for name, run, steps, data in bench_runs(a):
        if a.only and name not in a.only.split(","):
            continue
        path = os.path.join(out, f"{name}.json")
        argv = ["--steps", str(max(1, round(steps * a.scale))), "--repeat", str(a.repeat),
                "--threads", a.threads, "--json", path]
        argv += [x for b in (a.build or []) for x in ("--build", b)]
        argv += ["--data", data] if data else []
        argv += ["--check"] if a.check else []
        status |= run(argv)
        with open(path) as f:
            results.append(json.load(f))
    print("\n" + markdown(results))
    if a.out:
        print(f"\n(JSON in {out})")
    return status


if __name__ == "__main__":
    sys.exit(main())
