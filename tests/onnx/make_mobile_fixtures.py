#!/usr/bin/python3
"""Writes the MobileNetV3/SqueezeNet-style fixtures of tests/onnx/fixtures
(committed; rerun only to change them), with the ops of issue 29's item 9:

  /usr/bin/python3 tests/onnx/make_mobile_fixtures.py [--out tests/onnx/fixtures]

mobile_ops: Hardswish (opset 13 writes x * HardSigmoid(x)), a squeeze-and-
  excitation block gated by Hardsigmoid (ReduceMean keepdims 1, 1x1 convs,
  Mul of [N,C,H,W] by [N,C,1,1]), a SqueezeNet Fire (Concat of a 1x1 and a
  3x3 expand along channels), MaxPool with pads, AvgPool2d(padding=1) as
  torch writes it (a zero Pad, then AveragePool) and one with
  count_include_pad=False (AveragePool with pads), ReLU, BN, and a
  ReduceMean keepdims 0 before the classifier.
mobile_ops_relu: the same network with ReLU in place of Hardswish and
  Hardsigmoid, for an mt without those activations.

Each NAME gets NAME.onnx, NAME.input.f32 and NAME.logits.f32 as in
make_fixtures.py (whose training and export helpers this uses), listed in
manifest_mobile.json (fixture_test.py reads every manifest*.json).
"""
import argparse
import json
import os
import sys

import onnx
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_fixtures as mf  # noqa: E402


class MobileOps(nn.Module):
    def __init__(self, hard):
        super().__init__()
        act = nn.Hardswish if hard else nn.ReLU
        gate = nn.Hardsigmoid if hard else nn.ReLU
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(16), act())
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)  # 16 -> 8
        self.squeeze = nn.Sequential(nn.Conv2d(16, 8, 1), nn.ReLU())
        self.expand1 = nn.Sequential(nn.Conv2d(8, 16, 1), nn.ReLU())
        self.expand3 = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
        self.dw = nn.Sequential(nn.Conv2d(32, 32, 3, padding=1, groups=32, bias=False), nn.BatchNorm2d(32), act())
        self.se_reduce = nn.Sequential(nn.Conv2d(32, 8, 1), nn.ReLU())
        self.se_expand = nn.Sequential(nn.Conv2d(8, 32, 1), gate())
        self.smooth = nn.AvgPool2d(3, stride=1, padding=1)  # count_include_pad: a Pad + AveragePool
        self.down = nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False)  # 8 -> 4
        self.head = nn.Sequential(nn.Conv2d(32, 48, 1, bias=False), nn.BatchNorm2d(48), act())
        self.fc = nn.Linear(48, 10)

    def forward(self, x):
        x = self.pool(self.stem(x))
        s = self.squeeze(x)
        x = torch.cat([self.expand1(s), self.expand3(s)], 1)
        x = self.dw(x)
        x = x * self.se_expand(self.se_reduce(x.mean((2, 3), keepdim=True)))
        x = self.head(self.down(self.smooth(x)))
        return self.fc(x.mean((2, 3)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(HERE, "fixtures"))
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    tmpl = mf.templates()
    x, _ = mf.synthetic_batch(mf.BATCH, torch.Generator().manual_seed(1234), tmpl)
    fixtures = [
        ("mobile_ops", True, "MobileNetV3/SqueezeNet-style with every item-9 op: Hardswish (HardSigmoid + Mul), "
         "Hardsigmoid-gated SE (ReduceMean keepdims 1, 1x1 convs, Mul by [N,C,1,1]), Fire (Concat axis 1), "
         "MaxPool with pads, AvgPool2d(padding=1) as Pad + AveragePool, AveragePool with pads and "
         "count_include_pad 0, ReduceMean keepdims 0, ReLU, BN, depthwise conv, Gemm"),
        ("mobile_ops_relu", False, "mobile_ops with ReLU in place of Hardswish and Hardsigmoid: the structural "
         "item-9 ops (Mul gate, Concat, padded pools, ReduceMean) alone"),
    ]
    manifest = {"generated_by": "tests/onnx/make_mobile_fixtures.py", "torch": torch.__version__,
                "onnx": onnx.__version__, "input_layout": "raw little-endian float32, NCHW", "fixtures": []}
    for i, (name, hard, what) in enumerate(fixtures):
        torch.manual_seed(200 + i)
        model = mf.train_briefly(MobileOps(hard), 200 + i, tmpl)
        with torch.no_grad():
            logits = model(x)
        spread = (logits - logits.mean(0)).abs().max().item()
        moved = mf.sensitivity(model, x, logits)
        if spread < 0.5 or moved < 1e-2:
            sys.exit(f"{name}: logits barely depend on the input ({spread:.3g}) or on BN ({moved:.3g})")
        m = mf.export(model, x, 13, True)
        onnx.checker.check_model(m, full_check=True)
        ops = mf.op_counts(m)
        for op in ("Mul", "Concat", "MaxPool", "AveragePool", "Pad", "ReduceMean"):
            if op not in ops:
                sys.exit(f"{name}: the export has no {op} node: {ops}")
        onnx.save(m, os.path.join(a.out, name + ".onnx"))
        mf.write_f32(os.path.join(a.out, name + ".input.f32"), x)
        mf.write_f32(os.path.join(a.out, name + ".logits.f32"), logits)
        manifest["fixtures"].append({
            "name": name, "file": name + ".onnx", "input": name + ".input.f32", "logits": name + ".logits.f32",
            "input_shape": list(mf.SHAPE), "logits_shape": list(logits.shape), "classes": logits.shape[1],
            "parameters": sum(p.numel() for p in model.parameters()),
            "onnx_initializer_values": mf.initializer_values(m), "opset": 13,
            "batchnorm_nodes": ops.get("BatchNormalization", 0), "nodes": len(m.graph.node), "ops": ops,
            "logit_spread_across_batch": round(spread, 4), "logit_change_first_bn_mean_0.05": round(moved, 4),
            "expect": "ok", "unsupported_ops": [], "tests": what})
        print(f"{name}: {len(m.graph.node)} nodes {ops}, {manifest['fixtures'][-1]['parameters']} parameters")
    with open(os.path.join(a.out, "manifest_mobile.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
