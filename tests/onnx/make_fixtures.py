#!/usr/bin/python3
"""Writes the ONNX test fixtures of tests/onnx/fixtures (committed; rerun only
to change them). Needs Debian's python3-torch (1.13) and python3-onnx (1.12):

  /usr/bin/python3 tests/onnx/make_fixtures.py [--out tests/onnx/fixtures]

For each model NAME: NAME.onnx, NAME.input.f32 (a fixed batch, raw
little-endian float32, NCHW) and NAME.logits.f32 (PyTorch's eval-mode logits
for it), all listed in manifest.json with shape, classes, parameter count,
opset, node counts and what the file tests. Every BatchNorm gets random scale
and shift, then a few SGD steps on a synthetic 10-class task move its
running statistics and make the logits depend on the input (checked), so
folding or misreading them shows in the logits.

Also unsupported_op.onnx (a Softplus inside: valid ONNX that mt cannot train)
and truncated.onnx (the first part of a fixture's bytes: not parseable).
Seeds are fixed; the same torch and onnx versions write the same bytes.
"""
import argparse
import collections
import io
import json
import os
import sys

import onnx
import torch
from torch import nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "bench"))
import mobilenet_tiny_torch  # noqa: E402

BATCH = 4
SHAPE = (BATCH, 3, 32, 32)


class SmallCnn(nn.Module):
    """conv(bias) + BN + ReLU + MaxPool, conv + BN + ReLU + AvgPool + AvgPool,
    flatten, dropout, linear. torch 1.13 writes a default AvgPool2d as an
    all-zero Pad then AveragePool, one with count_include_pad=False as a bare
    AveragePool: the file has both. Eval-mode export drops the dropout; main()
    puts an ONNX Dropout node back (identity at inference) so the file has one."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(), nn.AvgPool2d(2),
            nn.AvgPool2d(2, count_include_pad=False))
        self.drop = nn.Dropout(0.25)
        self.fc = nn.Linear(16 * 4 * 4, 10)

    def forward(self, x):
        return self.fc(self.drop(torch.flatten(self.features(x), 1)))


class SmallResidual(nn.Module):
    """Stem conv stride 2, a basic residual block (two 3x3 convs, Add, ReLU),
    a stride-2 conv with ReLU6, a 1x1 conv, global average pool, linear."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        self.block = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
                                   nn.Conv2d(16, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16))
        self.relu = nn.ReLU()
        self.down = nn.Sequential(nn.Conv2d(16, 32, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(32),
                                  nn.ReLU6(), nn.Conv2d(32, 32, 1), nn.ReLU())
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = self.stem(x)
        x = self.relu(x + self.block(x))
        x = self.pool(self.down(x))
        return self.fc(torch.flatten(x, 1))


class SoftplusNet(nn.Module):
    """conv + BN + Softplus + maxpool + flatten + linear: Softplus is not an mt layer."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.Softplus(),
                                      nn.MaxPool2d(4))
        self.fc = nn.Linear(4 * 8 * 8, 10)

    def forward(self, x):
        return self.fc(torch.flatten(self.features(x), 1))


class ActivationsNet(nn.Module):
    """Every elementwise activation mt has besides ReLU and ReLU6: Hardswish
    (opset 13: HardSigmoid + Mul; 14: HardSwish) and SiLU (Sigmoid + Mul)
    after convs, Tanh, Sigmoid and Hardsigmoid on 1x1-conv branches added to
    the trunk (saturating functions in a chain would flatten the logits),
    LeakyReLU(0.1) last."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(16),
                                  nn.Hardswish(), nn.Conv2d(16, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16),
                                  nn.SiLU())
        self.tanh = nn.Sequential(nn.Conv2d(16, 16, 1), nn.Tanh())
        self.sigmoid = nn.Sequential(nn.Conv2d(16, 16, 1), nn.Sigmoid())
        self.hardsigmoid = nn.Sequential(nn.Conv2d(16, 16, 1), nn.Hardsigmoid())
        self.head = nn.Sequential(nn.Conv2d(16, 16, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(16),
                                  nn.LeakyReLU(0.1))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.stem(x)
        x = x + self.tanh(x) + self.sigmoid(x) + self.hardsigmoid(x)
        return self.fc(torch.flatten(self.pool(self.head(x)), 1))


def templates():
    return torch.randn(10, 3, 4, 4, generator=torch.Generator().manual_seed(7))


def synthetic_batch(n, g, tmpl):
    """A learnable 10-class task on 3x32x32: each class a fixed smooth 4x4
    pattern upsampled, plus noise. Returns (x, labels)."""
    y = torch.randint(0, 10, (n,), generator=g)
    low = tmpl[y] + torch.randn(n, 3, 4, 4, generator=g) * 0.5
    x = F.interpolate(low, size=(32, 32), mode="bilinear", align_corners=False)
    return x + torch.randn(n, 3, 32, 32, generator=g) * 0.5, y


def train_briefly(model, seed, tmpl, steps=40):
    """Random BN scale/shift, then a few SGD steps in train mode on the
    synthetic task: the BN running statistics move off their defaults and the
    logits come to depend on the input (an untrained deep net gives nearly
    the same logits for every sample, which would hide import errors).
    Returns the model in eval mode."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.weight.copy_(torch.rand(m.num_features, generator=g) + 0.5)
                m.bias.copy_(torch.randn(m.num_features, generator=g) * 0.2)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    model.train()
    for _ in range(steps):
        x, y = synthetic_batch(32, g, tmpl)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.eval()


def sensitivity(model, x, logits):
    """How much the logits move when the first BN's running mean moves by
    0.05 in one channel: an importer that misreads BN must fail 1e-4."""
    bn = next(m for m in model.modules() if isinstance(m, nn.BatchNorm2d))
    with torch.no_grad():
        bn.running_mean[0] += 0.05
        moved = (model(x) - logits).abs().max().item()
        bn.running_mean[0] -= 0.05
    return moved


def export(model, x, opset, keep_bn):
    """eval-mode export. keep_bn: TrainingMode.PRESERVE on an eval() model,
    which exports BatchNormalization nodes (EVAL folds them into the convs
    whatever do_constant_folding says); else EVAL with constant folding."""
    f = io.BytesIO()
    mode = torch.onnx.TrainingMode.PRESERVE if keep_bn else torch.onnx.TrainingMode.EVAL
    torch.onnx.export(model, x, f, opset_version=opset, training=mode, do_constant_folding=not keep_bn,
                      input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
    return onnx.load_from_string(f.getvalue())


def add_dropout(model, ratio):
    """Puts an ONNX Dropout (inference: identity) between Flatten and Gemm."""
    g = model.graph
    flat = next(n for n in g.node if n.op_type == "Flatten")
    gemm = next(n for n in g.node if n.op_type == "Gemm")
    out = flat.output[0] + "_dropout"
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    if opset >= 12:
        ratio_name = "dropout_ratio"
        g.initializer.append(onnx.helper.make_tensor(ratio_name, onnx.TensorProto.FLOAT, [], [ratio]))
        node = onnx.helper.make_node("Dropout", [flat.output[0], ratio_name], [out], name="/drop/Dropout")
    else:
        node = onnx.helper.make_node("Dropout", [flat.output[0]], [out], name="/drop/Dropout", ratio=ratio)
    idx = list(g.node).index(gemm)
    g.node.insert(idx, node)
    gemm.input[0] = out
    return model


def op_counts(model):
    return dict(sorted(collections.Counter(n.op_type for n in model.graph.node).items()))


def initializer_values(model):
    return sum(int(torch.tensor(list(t.dims)).prod().item()) if t.dims else 1 for t in model.graph.initializer)


def write_f32(path, t):
    # torch's float32 in native order; store little-endian.
    a = t.detach().contiguous().to(torch.float32).numpy()
    if sys.byteorder != "little":
        a = a.byteswap()
    with open(path, "wb") as f:
        f.write(a.tobytes())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(HERE, "fixtures"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)

    # One fixed batch for every 3x32x32 model (identical files cost git nothing).
    tmpl = templates()
    x, _ = synthetic_batch(BATCH, torch.Generator().manual_seed(1234), tmpl)

    v2 = "mobilenet-v2-style"
    fixtures = [
        # name, builder, opset, keep_bn, what it tests
        ("mobilenet_v2_style", lambda: mobilenet_tiny_torch.build(v2), 13, True,
         "MobileNetV2-style (tests/bench/mobilenet_tiny_torch.py mobilenet-v2-style): stem conv+BN+ReLU6 (Clip), "
         "inverted residual blocks with 1x1 expand, 3x3 depthwise (group=channels), 1x1 project, skip Add, a "
         "stride-1 block without skip, 1x1 head conv, GlobalAveragePool, Flatten, Gemm; BatchNormalization "
         "nodes kept, with non-trivial running statistics"),
        ("mobilenet_v2_style_folded", lambda: mobilenet_tiny_torch.build(v2), 13, False,
         "the same network and weights as mobilenet_v2_style with BN folded into the convs by the exporter "
         "(no BatchNormalization nodes; every conv has a bias)"),
        ("mobilenet_tiny", lambda: mobilenet_tiny_torch.build("mobilenet-tiny"), 13, True,
         "mt's mobilenet-tiny preset (tests/bench/mobilenet_tiny_torch.py): a t=1 block without expand conv, "
         "BatchNormalization nodes kept"),
        ("small_cnn_opset11", SmallCnn, 11, True,
         "opset 11: conv with bias, BN, ReLU, MaxPool, AveragePool twice (once after an all-zero Pad, a no-op, "
         "as torch 1.13 writes AvgPool2d; once bare), Flatten, Dropout (inserted as an ONNX node: torch drops "
         "it in eval export), Gemm"),
        ("small_residual_opset17", SmallResidual, 17, True,
         "opset 17: strided convs, a basic residual block (Add then ReLU), ReLU6 as Clip, a 1x1 conv with "
         "bias, GlobalAveragePool, Gemm"),
        ("activations_opset13", ActivationsNet, 13, True,
         "opset 13: Hardswish as HardSigmoid + Mul, SiLU as Sigmoid + Mul, LeakyRelu(0.1), Tanh, "
         "HardSigmoid(1/6, 1/2), Sigmoid, each after a conv"),
        ("activations_opset14", ActivationsNet, 14, True,
         "the same network and weights at opset 14, where Hardswish is the HardSwish op"),
        ("unsupported_op", SoftplusNet, 13, True,
         "valid ONNX with a Softplus inside: importers that do not support Softplus must reject it by name"),
    ]

    manifest = {"generated_by": "tests/onnx/make_fixtures.py", "torch": torch.__version__, "onnx": onnx.__version__,
                "input_layout": "raw little-endian float32, NCHW", "fixtures": []}
    models_by_name = {}
    trained = {}
    for i, (name, make, opset, keep_bn, what) in enumerate(fixtures):
        # The two mobilenet_v2_style exports share one trained model.
        key = ("mobilenet_v2_style" if name.startswith("mobilenet_v2_style") else
               "activations" if name.startswith("activations") else name)
        if key not in trained:
            torch.manual_seed(100 + i)
            trained[key] = train_briefly(make(), 100 + i, tmpl)
        model = trained[key]
        with torch.no_grad():
            logits = model(x)
        spread = (logits - logits.mean(0)).abs().max().item()
        moved = sensitivity(model, x, logits)
        if spread < 0.5 or moved < 1e-2:
            sys.exit(f"{name}: logits barely depend on the input ({spread:.3g}) or on BN ({moved:.3g})")
        m = export(model, x, opset, keep_bn)
        if name == "small_cnn_opset11":
            m = add_dropout(m, 0.25)
        onnx.checker.check_model(m, full_check=True)
        ops = op_counts(m)
        bn_nodes = ops.get("BatchNormalization", 0)
        bn_modules = sum(isinstance(mod, nn.BatchNorm2d) for mod in model.modules())
        if keep_bn and bn_nodes != bn_modules:
            sys.exit(f"{name}: {bn_nodes} BatchNormalization nodes, want {bn_modules}")
        if not keep_bn and bn_nodes:
            sys.exit(f"{name}: {bn_nodes} BatchNormalization nodes left after folding")
        onnx.save(m, os.path.join(a.out, name + ".onnx"))
        write_f32(os.path.join(a.out, name + ".input.f32"), x)
        write_f32(os.path.join(a.out, name + ".logits.f32"), logits)
        models_by_name[name] = m
        manifest["fixtures"].append({
            "name": name, "file": name + ".onnx", "input": name + ".input.f32", "logits": name + ".logits.f32",
            "input_shape": list(SHAPE), "logits_shape": list(logits.shape), "classes": logits.shape[1],
            "parameters": sum(p.numel() for p in model.parameters()),
            "onnx_initializer_values": initializer_values(m),
            "opset": opset, "batchnorm_nodes": bn_nodes, "nodes": len(m.graph.node), "ops": ops,
            "logit_spread_across_batch": round(spread, 4), "logit_change_first_bn_mean_0.05": round(moved, 4),
            "expect": "unsupported" if name == "unsupported_op" else "ok",
            "unsupported_ops": ["Softplus"] if name == "unsupported_op" else [],
            "tests": what})
        print(f"{name}: opset {opset}, {len(m.graph.node)} nodes {ops}, "
              f"{manifest['fixtures'][-1]['parameters']} parameters")

    # Folding check: same network, BN nodes gone, fewer nodes, same logits.
    kept, folded = models_by_name["mobilenet_v2_style"], models_by_name["mobilenet_v2_style_folded"]
    if not len(folded.graph.node) < len(kept.graph.node):
        sys.exit("folded export is not smaller than the BN-kept one")

    src = os.path.join(a.out, "small_cnn_opset11.onnx")
    data = open(src, "rb").read()
    with open(os.path.join(a.out, "truncated.onnx"), "wb") as f:
        f.write(data[:len(data) * 3 // 5])
    manifest["fixtures"].append({
        "name": "truncated", "file": "truncated.onnx", "expect": "corrupt",
        "tests": f"the first 3/5 of small_cnn_opset11.onnx's {len(data)} bytes: a parser must fail cleanly"})

    with open(os.path.join(a.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(a.out, n)) for n in os.listdir(a.out))
    print(f"wrote {len(manifest['fixtures'])} fixtures to {a.out} ({total // 1024} KiB)")


if __name__ == "__main__":
    main()
