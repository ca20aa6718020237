#!/usr/bin/python3
"""Mentee training: mtworker --standalone vs PyTorch, same machine, one run.

mt's mentee preset (five 3x3 convs of 32-128 channels, three dense layers,
0.7M parameters) and its twin in tests/bench/torch_twins.py train for a fixed
number of SGD steps (batch 64, lr 0.05, momentum 0.9) on the same
CIFAR-shaped data, at each thread setting (1, 2, nproc; every run a fresh
process), alternating the two. Prints samples/s and peak RSS of each side per
setting, the best of each side, the speed ratio and the RSS ratio, and
writes a JSON result (tests/bench/vs_torch.py does the work).

  tests/bench/mentee_vs_torch.py [--steps 60] [--threads 1,2,nproc] [--repeat 1]
      [--data DIR] [--build DIR ...] [--json out.json] [--check] [--torch-only]

--data: a directory of CIFAR-10 binary files; default: synthetic
CIFAR-shaped data in a temporary directory.
--build: an mt build tree, a folder holding mtworker or the binary; given
twice (before, after), both builds run against the same PyTorch runs.
--check: the issue's done-means for Mentee, judged on the last --build:
speed >= 2x and peak RSS <= 1/3 of PyTorch's, at the best settings and at
every thread setting; exit 1 if they fail.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vs_torch  # noqa: E402

BENCH = vs_torch.Bench("Mentee", "mentee", "mentee", "cifar", steps=60, done=(2.0, 1 / 3))

if __name__ == "__main__":
    sys.exit(vs_torch.main(BENCH, __doc__))
