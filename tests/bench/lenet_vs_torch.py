#!/usr/bin/python3
"""LeNet-5 training on Fashion-MNIST: mtworker --standalone vs PyTorch, same machine, one run.

mt's lenet5 preset and its twin in tests/bench/torch_twins.py train for a
fixed number of SGD steps (batch 64, lr 0.05, momentum 0.9; 900 steps is
about one epoch) on the Fashion-MNIST IDX files, at each thread setting (1,
2, nproc; every run a fresh process), alternating the two. Prints samples/s
and peak RSS of each side per setting, the best of each side, the speed
ratio and the RSS ratio, and writes a JSON result (tests/bench/vs_torch.py
does the work). Self-contained: unlike standalone_vs_torch.py it needs no
reference script outside the repository (and reports no accuracy).

  tests/bench/lenet_vs_torch.py [--steps 900] [--threads 1,2,nproc] [--repeat 1]
      [--data DIR] [--build DIR ...] [--json out.json] [--check] [--torch-only]

--data: a directory of IDX files (train-images-idx3-ubyte[.gz] ...);
default /usr/share/datasets/fashion-mnist.
--build: an mt build tree, a folder holding mtworker or the binary; given
twice (before, after), both builds run against the same PyTorch runs.
--check: LeNet-5 has no done-means in the issue; it reports and exits 0.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vs_torch  # noqa: E402

BENCH = vs_torch.Bench("LeNet-5 (Fashion-MNIST)", "lenet5", "lenet5", "idx", steps=900)

if __name__ == "__main__":
    sys.exit(vs_torch.main(BENCH, __doc__))
