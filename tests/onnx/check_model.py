#!/usr/bin/python3
"""Checks an ONNX file the way the ONNX project does: onnx.checker with
full_check (which includes strict shape inference), then shape inference
again to report the inferred output shapes.

  /usr/bin/python3 tests/onnx/check_model.py MODEL.onnx [--quiet]

Prints one line (opset, node counts by type, outputs with inferred shapes)
and exits 0; on any failure prints the reason on stderr and exits 1.
Exit 77 when onnx is not importable (tests read that as skipped).
"""
import argparse
import collections
import sys

try:
    import onnx
    import onnx.checker
    import onnx.shape_inference
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"check_model: onnx is not importable by {sys.executable}: {e}", file=sys.stderr)
    sys.exit(77)


def dims_of(value_info):
    t = value_info.type.tensor_type
    if not t.HasField("shape"):
        return None
    return [d.dim_param if d.HasField("dim_param") else (d.dim_value if d.HasField("dim_value") else "?")
            for d in t.shape.dim]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--quiet", action="store_true", help="print nothing on success")
    a = ap.parse_args()

    try:
        model = onnx.load(a.model)
    except FileNotFoundError:
        print(f"check_model: {a.model}: no such file", file=sys.stderr)
        return 1
    except Exception as e:  # a truncated or foreign file: protobuf's DecodeError and others
        print(f"check_model: {a.model}: not a readable ONNX model: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as e:
        print(f"check_model: {a.model}: checker failed: {e}", file=sys.stderr)
        return 1
    try:
        inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    except Exception as e:
        print(f"check_model: {a.model}: shape inference failed: {e}", file=sys.stderr)
        return 1
    outputs = {o.name: dims_of(o) for o in inferred.graph.output}
    missing = [name for name, d in outputs.items() if d is None]
    if missing:
        print(f"check_model: {a.model}: no inferred shape for output(s) {', '.join(missing)}", file=sys.stderr)
        return 1
    if not a.quiet:
        opsets = {o.domain or "ai.onnx": o.version for o in model.opset_import}
        ops = collections.Counter(n.op_type for n in model.graph.node)
        print(f"{a.model}: ok, ir {model.ir_version}, opset {opsets}, {len(model.graph.node)} nodes "
              f"{dict(sorted(ops.items()))}, outputs {outputs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
