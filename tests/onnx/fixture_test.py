#!/usr/bin/python3
"""ctest driver for the ONNX fixtures (tests/onnx/fixtures, manifest*.json).

  fixture_test.py ort NAME WORKDIR
      check_model.py on NAME.onnx, then ONNX Runtime (ort_run.mjs) on it
      reproduces NAME.logits.f32 within --tol: proves the runner and the file.
  fixture_test.py convert NAME WORKDIR --mtmodel BIN
      BIN convert NAME.onnx WORKDIR/NAME.mt.onnx; check_model.py on the
      result, and ONNX Runtime on it reproduces PyTorch's logits within --tol.
  fixture_test.py convert-rejects NAME WORKDIR --mtmodel BIN [--expect TEXT]
      BIN convert must fail: exit non-zero, not by a signal, with TEXT (for
      example the unsupported op's name) in what it prints.
  fixture_test.py check-rejects NAME WORKDIR
      check_model.py must reject NAME.onnx.

Exit 77 (skipped) only when the tools are missing: /usr/bin/python3 without
onnx (override with MT_ONNX_PYTHON), node, or tests/onnx/node_modules
(deploy/install-deps.sh runs npm ci there). Standard library only.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
SKIP = 77


def skip(msg):
    print(f"SKIP: {msg}")
    sys.exit(SKIP)


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def run(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def show(p):
    for stream in (p.stdout, p.stderr):
        if stream.strip():
            print(stream.rstrip())


def onnx_python():
    py = os.environ.get("MT_ONNX_PYTHON", "/usr/bin/python3")
    if not os.access(py, os.X_OK):
        skip(f"{py} does not exist (set MT_ONNX_PYTHON)")
    if subprocess.run([py, "-c", "import onnx"], capture_output=True).returncode != 0:
        skip(f"{py} cannot import onnx (Debian: apt-get install python3-onnx)")
    return py


def node():
    exe = shutil.which("node")
    if not exe:
        skip("node is not installed")
    if not os.path.isdir(os.path.join(HERE, "node_modules", "onnxruntime-web")):
        skip(f"no {HERE}/node_modules/onnxruntime-web (run: npm ci --prefix {HERE})")
    return exe


def fixture(name):
    # manifest.json (make_fixtures.py) and manifest_*.json (other scripts).
    for path in sorted(glob.glob(os.path.join(FIXTURES, "manifest*.json"))):
        for f in json.load(open(path))["fixtures"]:
            if f["name"] == name:
                return f
    fail(f"no fixture {name} in {FIXTURES}/manifest*.json")


def check_model(py, path, want_ok=True):
    p = run([py, os.path.join(HERE, "check_model.py"), path])
    show(p)
    if p.returncode == SKIP:
        skip("check_model.py: onnx is not importable")
    if want_ok and p.returncode != 0:
        fail(f"check_model.py rejected {path}")
    if not want_ok and p.returncode != 1:
        fail(f"check_model.py accepted {path} (exit {p.returncode}); it should reject it")


def input_batch(py, path):
    """The first input's leading dim: an int, or None when symbolic."""
    code = ("import onnx,sys; m=onnx.load(sys.argv[1]); i=[x for x in m.graph.input "
            "if x.name not in {t.name for t in m.graph.initializer}][0]; d=i.type.tensor_type.shape.dim[0]; "
            "print(d.dim_value if d.HasField('dim_value') else '')")
    p = subprocess.run([py, "-c", code, path], capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"cannot read the input shape of {path}: {p.stderr.strip()}")
    return int(p.stdout) if p.stdout.strip() else None


def ort_vs_logits(node_exe, py, model, fx, workdir, tol):
    shape = fx["input_shape"]
    n = shape[0]
    inp = os.path.join(FIXTURES, fx["input"])
    out = os.path.join(workdir, os.path.basename(model) + ".ort.f32")
    b = input_batch(py, model)
    if b is None or b == n:
        chunks = [(inp, n)]
    elif b > 0 and n % b == 0:
        # A model fixed to batch b: run the fixture's batch b samples at a time.
        raw = open(inp, "rb").read()
        per = len(raw) // n
        chunks = []
        for k in range(n // b):
            path = os.path.join(workdir, f"{os.path.basename(model)}.in{k}.f32")
            with open(path, "wb") as f:
                f.write(raw[k * b * per:(k + 1) * b * per])
            chunks.append((path, b))
        print(f"{model} has a fixed batch of {b}: running {len(chunks)} chunks")
    else:
        fail(f"{model} has a fixed batch of {b}, which does not divide the fixture's {n}")
    parts = []
    for k, (path, count) in enumerate(chunks):
        part = out + f".{k}"
        p = run([node_exe, os.path.join(HERE, "ort_run.mjs"), model, path, part,
                 "--shape", ",".join(str(d) for d in [count] + shape[1:])])
        show(p)
        if p.returncode != 0:
            fail(f"ONNX Runtime could not run {model}")
        dims = json.loads(p.stdout.strip().splitlines()[-1])["dims"]
        if dims != [count, fx["classes"]]:
            fail(f"{model}: ONNX Runtime output dims {dims}, want {[count, fx['classes']]}")
        parts.append(open(part, "rb").read())
    with open(out, "wb") as f:
        f.write(b"".join(parts))
    p = run([sys.executable, os.path.join(HERE, "compare_logits.py"), out, os.path.join(FIXTURES, fx["logits"]),
             "--tol", str(tol)])
    show(p)
    if p.returncode != 0:
        fail(f"{model}: ONNX Runtime's logits differ from PyTorch's")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["ort", "convert", "convert-rejects", "check-rejects"])
    ap.add_argument("name")
    ap.add_argument("workdir")
    ap.add_argument("--mtmodel")
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--expect", help="convert-rejects: text the failure must print (case-insensitive)")
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    fx = fixture(a.name)
    src = os.path.join(FIXTURES, fx["file"])
    py = onnx_python()
    exe = node() if a.mode in ("ort", "convert") else None

    if a.mode == "check-rejects":
        check_model(py, src, want_ok=False)
    elif a.mode == "ort":
        check_model(py, src)
        ort_vs_logits(exe, py, src, fx, a.workdir, a.tol)
    else:
        if not a.mtmodel or not os.access(a.mtmodel, os.X_OK):
            fail(f"--mtmodel {a.mtmodel}: not an executable")
        out = os.path.join(a.workdir, a.name + ".mt.onnx")
        if os.path.exists(out):
            os.remove(out)
        p = run([a.mtmodel, "convert", src, out], timeout=120)
        show(p)
        if a.mode == "convert-rejects":
            if p.returncode == 0:
                fail(f"mtmodel convert accepted {src}; it should refuse it")
            if p.returncode < 0 or p.returncode >= 128:
                fail(f"mtmodel convert died on {src} (exit {p.returncode}): it should fail cleanly")
            if a.expect and a.expect.lower() not in (p.stdout + p.stderr).lower():
                fail(f"mtmodel convert's message does not name {a.expect!r}")
        else:
            if p.returncode != 0:
                fail(f"mtmodel convert {src} failed (exit {p.returncode})")
            if not os.path.exists(out):
                fail(f"mtmodel convert exited 0 but wrote no {out}")
            check_model(py, out)
            ort_vs_logits(exe, py, out, fx, a.workdir, a.tol)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
