#!/usr/bin/python3
"""Do photos in folders train as well, and as leanly, as the same samples in
IDX and CIFAR-10 files?

Writes Fashion-MNIST (60,000 + 10,000 grey 28x28) and a colour CIFAR-10-format
set made from it (each picture padded to 32x32 and tinted a random colour)
as PNG and JPEG image folders with tests/mt_write_image_folder, plus the same
samples as IDX / CIFAR-10 files in the folder's order (so a lossless folder
trains on identical data in identical order). Then, with --augment none:

- standalone, LeNet-5 on Fashion-MNIST and Mentee on the colour set:
  test accuracy and samples/s from the folder and from the files;
- a hub and three workers on 127.0.0.1, LeNet-5, folder against files;
- peak RSS of a standalone run reading the 60,000 training images: from the
  IDX file (held in memory) and from the PNG folder, first run (decoding it
  into the cache) and later runs (reading the cache);
- how long the first decode of each folder took.

  tests/bench/image_folder.py [--build build] [--epochs 1] [--mentee-steps 400]
      [--work /tmp/mt-bench-images] [--json out.json]
"""
import argparse
import gzip
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FASHION_MNIST = "/usr/share/datasets/fashion-mnist"


def tinted_cifar(out, src=FASHION_MNIST):
    """Fashion-MNIST as colour CIFAR-10 binary files: padded to 32x32, each
    picture's three channels scaled by its own random tint."""
    if os.path.exists(os.path.join(out, "test_batch.bin")):
        return out
    os.makedirs(out, exist_ok=True)
    rng = random.Random(5)

    def read(name):
        path = os.path.join(src, name)
        return gzip.open(path + ".gz").read() if os.path.exists(path + ".gz") else open(path, "rb").read()

    for split, target in (("train", "data_batch_1.bin"), ("t10k", "test_batch.bin")):
        images, labels = read(f"{split}-images-idx3-ubyte")[16:], read(f"{split}-labels-idx1-ubyte")[8:]
        records = []
        for i, label in enumerate(labels):
            img = images[i * 784:(i + 1) * 784]
            planes = []
            for _ in range(3):
                t = rng.uniform(0.4, 1.0)
                lut = bytes(int(v * t) for v in range(256))
                rows = [bytes(2) + img[r * 28:(r + 1) * 28].translate(lut) + bytes(2) for r in range(28)]
                planes.append(bytes(64) + b"".join(rows) + bytes(64))
            records.append(bytes([label]) + b"".join(planes))
        with open(os.path.join(out, target), "wb") as f:
            f.write(b"".join(records))
    return out


def run(cmd, env=None, timeout=3600):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
    return r


def folder(a, source, name, fmt, env):
    """Writes the folder (and the same-order files) once; returns both paths."""
    out, same = os.path.join(a.work, name), os.path.join(a.work, name + "-files")
    if not os.path.exists(os.path.join(out, "test")):
        shutil.rmtree(out, ignore_errors=True)
        run([os.path.join(a.build, "tests", "mt_write_image_folder"), source, out, "--format", fmt,
             "--quality", "90", "--same-order", same], env)
    return out, same


def standalone(a, env, dataset, model, length, cold=False):
    """One run; returns its report with peak RSS and wall seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "r.json")
        cmd = ["/usr/bin/time", "-f", "%M", os.path.join(a.build, "worker", "mtworker"), "--standalone",
               "--model", model, "--dataset", dataset, *length, "--augment", "none", "--seed", "1",
               "--report", report, "--export", os.path.join(tmp, "m.onnx"), "--log-every", "600"]
        start = time.time()
        r = run(cmd, env)
        rep = json.load(open(report))
        rep["wall_seconds"] = time.time() - start
        rep["max_rss_kib"] = int(r.stderr.strip().splitlines()[-1])
        return rep


def cluster(a, env, dataset, epochs):
    with tempfile.TemporaryDirectory() as tmp:
        port_file, report = os.path.join(tmp, "port"), os.path.join(tmp, "hub.json")
        hub = subprocess.Popen([os.path.join(a.build, "hub", "mthub"), "--workers", "3", "--bind", "127.0.0.1",
                                "--port", "0", "--port-file", port_file, "--http-port", "0", "--insecure",
                                "--dataset", dataset, "--epochs", str(epochs), "--augment", "none",
                                "--report", report, "--export", os.path.join(tmp, "m.onnx"),
                                "--log-every", "600"],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for _ in range(1200):
            if os.path.exists(port_file) and open(port_file).read().strip():
                break
            time.sleep(0.1)
        port = open(port_file).read().strip()
        workers = [subprocess.Popen([os.path.join(a.build, "worker", "mtworker"), "--hub", f"127.0.0.1:{port}",
                                     "--insecure", "--allow-data", a.work],
                                    env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                   for _ in range(3)]
        for w in workers:
            w.wait(timeout=3600)
        _, err = hub.communicate(timeout=600)
        if hub.returncode != 0:
            sys.exit("hub failed:\n" + err[-3000:])
        return json.load(open(report))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--mentee-steps", type=int, default=400)
    p.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "mt-bench-images"))
    p.add_argument("--json")
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    cache = os.path.join(a.work, "cache")
    env = dict(os.environ, MT_CACHE_DIR=cache)
    results = {}

    fm_png, fm_files = folder(a, "fashion-mnist", "fashion-png", "png", env)
    fm_jpeg, _ = folder(a, "fashion-mnist", "fashion-jpeg", "jpeg", env)
    colour = tinted_cifar(os.path.join(a.work, "colour-cifar"))
    c_png, c_files = folder(a, colour, "colour-png", "png", env)
    c_jpeg, _ = folder(a, colour, "colour-jpeg", "jpeg", env)

    # Peak RSS reading the 60,000 training images; the first folder run decodes.
    shutil.rmtree(cache, ignore_errors=True)
    epoch = ["--epochs", str(a.epochs)]
    cold = standalone(a, env, fm_png, "lenet5", epoch)
    rows = []
    for name, data, model, length in (
            ("fashion IDX", fm_files, "lenet5", epoch),
            ("fashion PNG", fm_png, "lenet5", epoch),
            ("fashion JPEG q90", fm_jpeg, "lenet5", epoch),
            ("colour CIFAR-10 files", c_files, "mentee", ["--steps", str(a.mentee_steps)]),
            ("colour PNG", c_png, "mentee", ["--steps", str(a.mentee_steps)]),
            ("colour JPEG q90", c_jpeg, "mentee", ["--steps", str(a.mentee_steps)])):
        r = standalone(a, env, data, model, length)
        rows.append((name, r))
        results[name] = {k: r[k] for k in ("test_accuracy", "test_loss", "samples_per_second",
                                           "max_rss_kib", "wall_seconds")}
    results["fashion PNG, first run (decoding)"] = {k: cold[k] for k in ("test_accuracy", "max_rss_kib",
                                                                          "wall_seconds")}
    print("| data | model | test accuracy | samples/s | peak RSS | wall s |")
    print("|---|---|---|---|---|---|")
    for name, r in rows + [("fashion PNG, first run (decoding)", cold)]:
        print(f"| {name} | {r['model']} | {r['test_accuracy']:.4f} | {r.get('samples_per_second', 0):.0f} | "
              f"{r['max_rss_kib'] / 1024:.1f} MiB | {r['wall_seconds']:.1f} |")

    for name, data in (("hub + 3 workers, fashion IDX", fm_files), ("hub + 3 workers, fashion PNG", fm_png)):
        r = cluster(a, env, data, a.epochs)
        results[name] = {"test_accuracy": r["test_accuracy"]}
        print(f"| {name} | lenet5 | {r['test_accuracy']:.4f} | | | |")
    idx_rss, png_rss = results["fashion IDX"]["max_rss_kib"], results["fashion PNG"]["max_rss_kib"]
    print(f"\npeak RSS reading 60,000 images: PNG folder {png_rss / 1024:.1f} MiB = "
          f"{png_rss / idx_rss:.2f}x the IDX file's {idx_rss / 1024:.1f} MiB "
          f"(first run, decoding: {cold['max_rss_kib'] / 1024:.1f} MiB)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
