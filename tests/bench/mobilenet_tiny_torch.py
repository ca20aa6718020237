#!/usr/bin/python3
"""The MobileNet twins under their old name: tests/onnx/make_fixtures.py and
older notes import mobilenet_tiny_torch. The twins live in torch_twins.py."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_twins import ARCHS, MobileNetV2Like, build, main, parameter_count  # noqa: E402

__all__ = ["ARCHS", "MobileNetV2Like", "build", "main", "parameter_count"]

if __name__ == "__main__":
    sys.exit(main())
