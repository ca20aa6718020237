#!/usr/bin/env python3
"""Compares two raw little-endian float32 files element by element.

  tests/onnx/compare_logits.py A.f32 B.f32 [--tol 1e-4]

Exit 0 when they hold the same number of values and max |a - b| <= tol;
exit 1 (with the max abs diff and where) otherwise, or when either holds a
NaN or an infinity. Standard library only: any python3 runs it.
"""
import argparse
import array
import math
import sys


def read_f32(path):
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) % 4:
        raise ValueError(f"{path}: {len(raw)} bytes is not a whole number of float32 values")
    a = array.array("f")
    a.frombytes(raw)
    if sys.byteorder != "little":
        a.byteswap()
    return a


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--tol", type=float, default=1e-4)
    args = ap.parse_args()
    try:
        a, b = read_f32(args.a), read_f32(args.b)
    except (OSError, ValueError) as e:
        print(f"compare_logits: {e}", file=sys.stderr)
        return 1
    if len(a) != len(b):
        print(f"compare_logits: {args.a} has {len(a)} values, {args.b} has {len(b)}", file=sys.stderr)
        return 1
    if not a:
        print(f"compare_logits: {args.a} is empty", file=sys.stderr)
        return 1
    worst, at = 0.0, 0
    for i, (x, y) in enumerate(zip(a, b)):
        if not (math.isfinite(x) and math.isfinite(y)):
            print(f"compare_logits: value {i} is not finite ({x} vs {y})", file=sys.stderr)
            return 1
        d = abs(x - y)
        if d > worst:
            worst, at = d, i
    line = f"{len(a)} values, max abs diff {worst:.3g} at {at} ({a[at]:.6g} vs {b[at]:.6g}), tol {args.tol:g}"
    if worst > args.tol:
        print(f"compare_logits: FAIL: {line}", file=sys.stderr)
        return 1
    print(f"compare_logits: ok: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
