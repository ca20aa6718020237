#!/usr/bin/python3
"""How much of a worker's photos the hub can rebuild from what it receives.

A gradient-inversion attack (Geiping et al. 2020, "Inverting Gradients": a
cosine distance between the update a guess of the images would produce and
the update received, plus a total-variation prior, minimised by Adam over
the guessed pixels) against LeNet-5 on Fashion-MNIST, as mt's worker
computes its update: the gradient of the mean cross-entropy over its batch
at --sync-every 1, the change of its weights over H local SGD steps
(momentum 0.9, lr 0.05, mt's defaults; a fresh momentum buffer: the run's
first round) above, at the run's initial weights. The model is the PyTorch
twin of mt's preset (torch_twins.py); the attacker knows the weights (the
hub sent them), the labels (the strongest attacker: iDLG recovers them from
the last layer at batch 1) and the batch and step counts (the hub's plan).

What the hub sees, per row:
  none       the worker's own update (the plain default)
  dp-eps8,   that update clipped and with Gaussian noise of sigma times the
  dp-eps1    clip added, sigma the noise multiplier mthub --dp-epsilon E
             solves for a run of one epoch of 3 workers at the default
             global batch (read from mthub's log: the accountant has one
             owner, core/privacy/dp_accountant.h). This is what DP
             guarantees against a hub that could isolate the worker's noised
             update; under central DP the hub itself sees the clipped update
             without noise, which the attack treats as `none` (the cosine
             ignores scale).
  sum-of-3   the sum of 3 workers' updates, as secure aggregation shows it
             to the hub; the attacker guesses all 3 workers' images and each
             of this worker's images is matched to its best guess.

Quality: PSNR (dB) and SSIM of each true image against the reconstruction
of the same label that matches it best, averaged over the worker's batch.

  /usr/bin/python3 tests/bench/inversion.py [--quick] [--iterations N]
      [--batches 1,4,16,64] [--sync 1,4] [--json OUT] [--png OUT]

--quick: batches 1 and 4, 100 iterations (a few minutes on 2 cores).
Needs mthub built (build/hub/mthub, or --mthub) for the DP rows' noise.
"""
import argparse
import gzip
import json
import os
import re
import signal
import struct
import subprocess
import sys
import time
import zlib

import numpy as np
import torch
import torch.nn.functional as F
from torch.nn.utils.stateless import functional_call

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_twins import build  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FASHION = "/usr/share/datasets/fashion-mnist"
LR, MOMENTUM = 0.05, 0.9  # mt's SGD defaults (core/optim/optimizer.h)
WORKERS = 3


def load_images(count, seed):
    """`count` training images in [-1, 1] (mt's default scaling) and labels."""
    with gzip.open(os.path.join(FASHION, "train-images-idx3-ubyte.gz")) as f:
        _, n, rows, cols = struct.unpack(">IIII", f.read(16))
        pixels = np.frombuffer(f.read(), dtype=np.uint8).reshape(n, 1, rows, cols)
    with gzip.open(os.path.join(FASHION, "train-labels-idx1-ubyte.gz")) as f:
        f.read(8)
        labels = np.frombuffer(f.read(), dtype=np.uint8)
    pick = np.random.default_rng(seed).choice(n, count, replace=False)
    x = torch.tensor(pixels[pick], dtype=torch.float32) / 127.5 - 1
    return x, torch.tensor(labels[pick], dtype=torch.long)


def worker_updates(model, params, xs, ys, sync, create_graph):
    """Sum over workers of each worker's update: xs[w][k] is worker w's batch
    of local step k. A list of tensors shaped as the parameters."""
    names = list(params)
    total = None
    for w in range(len(xs)):
        p = dict(params)
        velocity = [torch.zeros_like(v) for v in p.values()]
        for k in range(sync):
            loss = F.cross_entropy(functional_call(model, p, (xs[w][k],)), ys[w][k])
            grads = torch.autograd.grad(loss, list(p.values()), create_graph=create_graph)
            if sync == 1:
                update = list(grads)
                break
            velocity = [MOMENTUM * v + g for v, g in zip(velocity, grads)]
            p = {n: p[n] - LR * v for n, v in zip(names, velocity)}
        if sync > 1:
            update = [p[n] - params[n] for n in names]
        total = update if total is None else [a + b for a, b in zip(total, update)]
    return total


def flat(tensors):
    return torch.cat([t.reshape(-1) for t in tensors])


def total_variation(x):
    return (x[..., 1:, :] - x[..., :-1, :]).abs().mean() + (x[..., :, 1:] - x[..., :, :-1]).abs().mean()


def attack(model, params, target, ys, shape, sync, iterations, tv, seed):
    """Guessed images (workers, sync, batch, 1, 28, 28) whose update points as `target` does."""
    gen = torch.Generator().manual_seed(seed)
    guess = torch.randn(shape, generator=gen).clamp_(-1, 1).requires_grad_(True)
    opt = torch.optim.Adam([guess], lr=0.1)
    sched = torch.optim.lr_scheduler.MultiStepLR(
        opt, [int(iterations * f) for f in (0.375, 0.625, 0.875)], gamma=0.1)
    target = target.detach()
    for _ in range(iterations):
        opt.zero_grad()
        update = flat(worker_updates(model, params, guess, ys, sync, create_graph=True))
        loss = 1 - F.cosine_similarity(update, target, dim=0) + tv * total_variation(guess)
        loss.backward()
        opt.step()
        sched.step()
        with torch.no_grad():
            guess.clamp_(-1, 1)
    return guess.detach()


def gaussian_window(size=11, sigma=1.5):
    g = torch.exp(-((torch.arange(size) - size // 2) ** 2) / (2 * sigma ** 2))
    g = g / g.sum()
    return (g[:, None] * g[None, :])[None, None]


def ssim(a, b):
    """SSIM of images in [0, 1] (Wang et al. 2004, an 11x11 Gaussian window)."""
    w = gaussian_window()
    mu_a, mu_b = F.conv2d(a, w), F.conv2d(b, w)
    var_a = F.conv2d(a * a, w) - mu_a ** 2
    var_b = F.conv2d(b * b, w) - mu_b ** 2
    cov = F.conv2d(a * b, w) - mu_a * mu_b
    c1, c2 = 0.01 ** 2, 0.03 ** 2
    s = ((2 * mu_a * mu_b + c1) * (2 * cov + c2)) / ((mu_a ** 2 + mu_b ** 2 + c1) * (var_a + var_b + c2))
    return s.mean().item()


def psnr(a, b):
    mse = ((a - b) ** 2).mean().item()
    return 10 * np.log10(1 / max(mse, 1e-10))


def score(truth, truth_labels, guesses, guess_labels):
    """Mean PSNR, SSIM over the true images, each against its best guess of
    the same label (greedy, each guess used once), and the matched guesses."""
    to01 = lambda x: (x.clamp(-1, 1) + 1) / 2  # noqa: E731
    pairs = []
    for i in range(len(truth)):
        for j in range(len(guesses)):
            if truth_labels[i] == guess_labels[j]:
                pairs.append((psnr(to01(truth[i]), to01(guesses[j])), i, j))
    pairs.sort(reverse=True)
    matched, used = {}, set()
    for p, i, j in pairs:
        if i not in matched and j not in used:
            matched[i] = j
            used.add(j)
    ps = [psnr(to01(truth[i]), to01(guesses[j])) for i, j in matched.items()]
    ss = [ssim(to01(truth[i])[None], to01(guesses[j])[None]) for i, j in matched.items()]
    return float(np.mean(ps)), float(np.mean(ss)), [guesses[matched[i]] for i in range(len(truth))]


def noise_multiplier(mthub, epsilon, sync):
    """What mthub --dp-epsilon solves for one epoch of 3 workers at H `sync`."""
    cmd = [mthub, "--dataset", "fashion-mnist", "--workers", str(WORKERS), "--epochs", "1",
           "--sync-every", str(sync), "--dp-clip", "1", "--dp-epsilon", str(epsilon),
           "--bind", "127.0.0.1", "--port", "0", "--http-port", "0", "--insecure"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        for line in proc.stdout:
            m = re.search(r"noise multiplier ([0-9.e+-]+).*?after at most (\d+) rounds", line)
            if m:
                return float(m.group(1)), int(m.group(2))
        raise RuntimeError(f"mthub said no noise multiplier ({' '.join(cmd)})")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


def write_png(path, gray):
    """An 8-bit grayscale PNG from a 2-D array in [0, 1] (zlib only)."""
    h, w = gray.shape
    raw = b"".join(b"\0" + (np.clip(row, 0, 1) * 255).astype(np.uint8).tobytes() for row in gray)
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))  # noqa: E731
    data = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))
    with open(path, "wb") as f:
        f.write(data)


def mosaic(rows, scale=3):
    """Rows of images (each a list of 28x28 arrays in [-1, 1]) as one picture."""
    cols = max(len(r) for r in rows)
    pad = 2
    out = np.ones((len(rows) * (28 + pad) + pad, cols * (28 + pad) + pad))
    for r, images in enumerate(rows):
        for c, img in enumerate(images):
            y, x = pad + r * (28 + pad), pad + c * (28 + pad)
            out[y:y + 28, x:x + 28] = (img.reshape(28, 28).numpy() + 1) / 2
    return np.kron(out, np.ones((scale, scale)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--batches", default=None, help="comma-separated (default 1,4,16,64)")
    ap.add_argument("--sync", default="1,4", help="local steps per round, comma-separated")
    ap.add_argument("--iterations", type=int, default=None, help="attack steps (300; --quick 100)")
    ap.add_argument("--tv", type=float, default=0.1, help="total-variation weight")
    ap.add_argument("--cases", default="none,dp-eps8,dp-eps1,sum-of-3")
    ap.add_argument("--mthub", default=os.path.join(ROOT, "build", "hub", "mthub"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", help="write the table here as JSON")
    ap.add_argument("--png", help="write originals against reconstructions here")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    batches = [int(b) for b in (args.batches or ("1,4" if args.quick else "1,4,16,64")).split(",")]
    syncs = [int(h) for h in args.sync.split(",")]
    iterations = args.iterations or (100 if args.quick else 300)
    cases = args.cases.split(",")

    torch.manual_seed(args.seed)
    model = build("lenet5")
    params = {n: p.detach().clone().requires_grad_(True) for n, p in model.named_parameters()}
    sigmas = {}
    for case in cases:
        if case.startswith("dp-eps"):
            for h in syncs:
                sigmas[(case, h)] = noise_multiplier(args.mthub, float(case[6:]), h)

    rows, pictures = [], {}
    for h in syncs:
        for b in batches:
            x, y = load_images(WORKERS * h * b, args.seed + 1000 * h + b)
            xs = x.reshape(WORKERS, h, b, 1, 28, 28)
            ys = y.reshape(WORKERS, h, b)
            own = worker_updates(model, params, xs[:1], ys[:1], h, create_graph=False)
            own_flat = flat(own)
            for case in cases:
                t0 = time.time()
                workers = 1
                if case == "none":
                    target = own_flat
                elif case.startswith("dp-eps"):
                    sigma, rounds = sigmas[(case, h)]
                    clip = own_flat.norm().item()  # the clip binds at the update's own norm
                    gen = torch.Generator().manual_seed(args.seed + 7)
                    target = own_flat + sigma * clip * torch.randn(own_flat.shape, generator=gen)
                elif case == "sum-of-3":
                    workers = WORKERS
                    target = flat(worker_updates(model, params, xs, ys, h, create_graph=False))
                else:
                    raise SystemExit(f"unknown case {case}")
                guess = attack(model, params, target, ys[:workers], (workers, h, b, 1, 28, 28),
                               h, iterations, args.tv, args.seed)
                truth = xs[0].reshape(-1, 1, 28, 28)
                p, s, matched = score(truth, ys[0].reshape(-1), guess.reshape(-1, 1, 28, 28),
                                      ys[:workers].reshape(-1))
                row = {"sync": h, "batch": b, "case": case, "psnr_db": round(p, 2),
                       "ssim": round(s, 3), "seconds": round(time.time() - t0, 1)}
                if case.startswith("dp-eps"):
                    row["noise_multiplier"], row["rounds"] = sigmas[(case, h)]
                rows.append(row)
                print(json.dumps(row), flush=True)
                pictures[(h, b, case)] = (truth, matched)
    print()
    print(f"{'H':>2} {'batch':>5} " + " ".join(f"{c:>16}" for c in cases))
    for h in syncs:
        for b in batches:
            cells = [next(r for r in rows if (r["sync"], r["batch"], r["case"]) == (h, b, c))
                     for c in cases]
            print(f"{h:>2} {b:>5} " + " ".join(f"{c['psnr_db']:>7.2f} dB {c['ssim']:>5.2f}" for c in cells))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"iterations": iterations, "tv": args.tv, "rows": rows}, f, indent=1)
    if args.png:
        # Batch 4 at H 1 (else the first case run): originals, then each case's reconstructions.
        h, b = (1, 4) if (1, 4, cases[0]) in pictures else next(iter(pictures))[:2]
        truth = pictures[(h, b, cases[0])][0]
        picture_rows = [[t for t in truth]] + [list(pictures[(h, b, c)][1]) for c in cases]
        write_png(args.png, mosaic(picture_rows))


if __name__ == "__main__":
    main()
