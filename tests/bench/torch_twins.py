#!/usr/bin/python3
"""PyTorch twins of mt's networks: the same layers, sizes and parameter count.

  lenet5              mt's preset (core/model/presets.cc), 1x28x28 input:
                      conv 6 (5x5, padding 2), ReLU, max-pool 2, conv 16
                      (5x5), ReLU, max-pool 2, dense 120, ReLU, dense 84,
                      ReLU, dense 10 (61,706 parameters).
  mentee              mt's preset, 3x32x32 input: 3x3 convs (padding 1) of
                      32, 32, 64, 64, 128 channels, each with ReLU, max-pool
                      2 after the 2nd, 4th and 5th, dense 256, ReLU, dense
                      128, ReLU, dense 10 (698,154 parameters).

MobileNetV2-style networks for 3x32x32 input:

  mobilenet-tiny      mt's preset: stem conv 16 (3x3, stride 1), inverted
                      residual blocks (t, c, s) = (1,16,1) (6,24,2) (6,24,1)
                      (6,32,2) (6,32,1), 1x1 conv 128, global average pool,
                      dense 10.
  mobilenet-v2-style  the architecture of tests/onnx/fixtures/mobilenet_v2_style.onnx
                      (about 45k parameters).

Each inverted residual block: 1x1 expand conv to t*in + BN + ReLU6 (left out
when t == 1), 3x3 depthwise conv (groups = channels) stride s + BN + ReLU6,
1x1 project conv to c + BN, and a skip Add where s == 1 and in == c. Every
conv has bias=False; every conv is followed by BatchNorm2d.

Importable (build(name), TWINS, INPUT_SHAPES, ARCHS: the MobileNet ones,
MobileNetV2Like) and a CLI (mobilenet_tiny_torch.py is its old name):

  /usr/bin/python3 tests/bench/torch_twins.py [--model mobilenet-tiny] [--summary]

prints the parameter count (and with --summary the layers).
"""
import argparse
import sys

import torch
from torch import nn

# name -> (stem channels, [(t, c, s), ...], last conv channels, classes)
ARCHS = {
    "mobilenet-tiny": (16, [(1, 16, 1), (6, 24, 2), (6, 24, 1), (6, 32, 2), (6, 32, 1)], 128, 10),
    # Expansion 4 (3 in the last block), a stride-1 block without a skip
    # (32 -> 40) and a wider head than mobilenet-tiny's.
    "mobilenet-v2-style": (16, [(1, 8, 1), (4, 16, 2), (4, 16, 1), (4, 24, 2), (4, 24, 1), (4, 32, 2),
                                (4, 32, 1), (3, 40, 1)], 112, 10),
}


def conv_bn(cin, cout, k, stride=1, groups=1, relu6=True):
    layers = [nn.Conv2d(cin, cout, k, stride=stride, padding=k // 2, groups=groups, bias=False),
              nn.BatchNorm2d(cout)]
    if relu6:
        layers.append(nn.ReLU6(inplace=False))
    return nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    def __init__(self, cin, t, cout, stride):
        super().__init__()
        hidden = cin * t
        layers = []
        if t != 1:
            layers.append(conv_bn(cin, hidden, 1))
        layers.append(conv_bn(hidden, hidden, 3, stride=stride, groups=hidden))
        layers.append(conv_bn(hidden, cout, 1, relu6=False))
        self.body = nn.Sequential(*layers)
        self.skip = stride == 1 and cin == cout

    def forward(self, x):
        y = self.body(x)
        return x + y if self.skip else y


class MobileNetV2Like(nn.Module):
    def __init__(self, stem, blocks, last, classes, in_channels=3):
        super().__init__()
        layers = [conv_bn(in_channels, stem, 3)]
        c = stem
        for t, cout, s in blocks:
            layers.append(InvertedResidual(c, t, cout, s))
            c = cout
        layers.append(conv_bn(c, last, 1))
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(last, classes)

    def forward(self, x):
        x = self.pool(self.features(x))
        return self.classifier(torch.flatten(x, 1))


def lenet5():
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))


def mentee():
    def conv(cin, cout):
        return [nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU()]
    return nn.Sequential(
        *conv(3, 32), *conv(32, 32), nn.MaxPool2d(2), *conv(32, 64), *conv(64, 64), nn.MaxPool2d(2),
        *conv(64, 128), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(128 * 4 * 4, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))


PLAIN = {"lenet5": lenet5, "mentee": mentee}
TWINS = sorted(PLAIN) + sorted(ARCHS)
INPUT_SHAPES = {name: (1, 28, 28) if name == "lenet5" else (3, 32, 32) for name in TWINS}


def build(name="mobilenet-tiny"):
    if name in PLAIN:
        return PLAIN[name]()
    if name not in ARCHS:
        raise ValueError(f"unknown model {name} (known: {', '.join(TWINS)})")
    return MobileNetV2Like(*ARCHS[name])


def parameter_count(model):
    """Trainable parameters (BN's running statistics are buffers, not counted)."""
    return sum(p.numel() for p in model.parameters())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="mobilenet-tiny", choices=TWINS)
    ap.add_argument("--summary", action="store_true", help="also print the layers")
    a = ap.parse_args()
    m = build(a.model)
    if a.summary:
        print(m)
    m.eval()
    with torch.no_grad():
        out = m(torch.zeros(1, *INPUT_SHAPES[a.model]))
    print(f"{a.model}: {parameter_count(m)} parameters, output {tuple(out.shape)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
