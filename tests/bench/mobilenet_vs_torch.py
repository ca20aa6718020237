#!/usr/bin/python3
"""MobileNetV2-style training: mtworker --standalone vs PyTorch, same machine, one run.

Trains the same network for a fixed number of SGD steps (batch 64, lr 0.05,
momentum 0.9) on the same CIFAR-shaped data, in mt and in PyTorch at each
thread setting (1, 2, nproc; every run a fresh process), alternating the two
so machine noise hits both alike. Prints samples/s and peak RSS of each side
per setting, the best of each side, the speed ratio best mt / best PyTorch
and the RSS ratio mt / PyTorch, and writes a JSON result (tests/bench/vs_torch.py
does the work; its docstring says how).

  tests/bench/mobilenet_vs_torch.py [--model FILE.onnx|mobilenet-tiny] [--steps 60]
      [--threads 1,2,nproc] [--repeat 1] [--data DIR] [--build DIR ...] [--json out.json]
      [--check] [--torch-only]

--model: default tests/onnx/fixtures/mobilenet_v2_style.onnx, whose
architecture is mobilenet-v2-style of tests/bench/torch_twins.py (PyTorch
trains that twin; mt loads the .onnx); mobilenet-tiny is mt's preset and the
PyTorch twin of the same name.
--data: a directory of CIFAR-10 binary files (data_batch_1.bin ...,
test_batch.bin); default: synthetic CIFAR-shaped data written to a temporary
directory (a learnable 10-class task), read by both sides.
--build: an mt build tree, a folder holding mtworker or the binary; given
twice (before, after), both builds run against the same PyTorch runs.
--check: the issue's done-means for the MobileNetV2-style model (applied to
mobilenet-tiny too: the issue's baseline figures are that preset's), judged
on the last --build: speed >= 3x and peak RSS <= 1/3 of PyTorch's, at the
best settings and at every thread setting; exit 1 if they fail.

mt failing (for example a build without .onnx support) is reported as such
and the PyTorch half still printed; the exit status is then 1.
Needs PyTorch (deploy/install-deps.sh --bench) and, for mt, a built tree.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vs_torch  # noqa: E402
from vs_torch import train_files, write_synthetic  # noqa: E402

__all__ = ["main", "torch_arch", "train_files", "write_synthetic"]  # older callers import the data helpers here

DEFAULT_MODEL = os.path.join(vs_torch.ROOT, "tests", "onnx", "fixtures", "mobilenet_v2_style.onnx")
DONE = (3.0, 1 / 3)


def torch_arch(model):
    """The torch_twins.py architecture that matches --model."""
    if model == "mobilenet-tiny":
        return "mobilenet-tiny"
    base = os.path.basename(model)
    if base.startswith("mobilenet_v2_style") or model == "mobilenet-v2-style":
        return "mobilenet-v2-style"
    if base.startswith("mobilenet_tiny"):
        return "mobilenet-tiny"
    sys.exit(f"no PyTorch twin known for --model {model} (mobilenet-tiny, or a mobilenet_v2_style*.onnx "
             "or mobilenet_tiny*.onnx fixture)")


def main(argv=None):
    ap = vs_torch.make_parser(__doc__, vs_torch.Bench("", "", "", "cifar", 60))
    ap.add_argument("--model", default=DEFAULT_MODEL, help="an .onnx fixture or mobilenet-tiny")
    a = ap.parse_args(argv)
    arch = torch_arch(a.model)
    mt_model = a.model if a.model == "mobilenet-tiny" or not os.path.exists(a.model) else os.path.abspath(a.model)
    title = "MobileNetV2-style" if arch == "mobilenet-v2-style" else "mobilenet-tiny"
    if mt_model != "mobilenet-tiny":
        title += f" ({os.path.basename(a.model)})"
    bench = vs_torch.Bench(title, mt_model, arch, "cifar", a.steps,
                           done=DONE)
    return vs_torch.run(bench, a)


if __name__ == "__main__":
    sys.exit(main())
