#!/usr/bin/env bash
# The main job on one machine: install dependencies, build, start a hub and
# three workers, train LeNet-5 on Fashion-MNIST for one epoch, and print the
# final test accuracy. Extra arguments go to mthub (e.g. --epochs 3).
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh
deploy/build.sh
exec deploy/local-cluster.sh --workers 3 -- --model lenet5 --dataset fashion-mnist --epochs 1 "$@"
