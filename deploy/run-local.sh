#!/usr/bin/env bash
# The main job on one machine: install dependencies, build, and train LeNet-5
# on Fashion-MNIST for one epoch, printing the final test accuracy.
# Extra arguments go to mtworker (e.g. --epochs 3 --threads 2).
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh
deploy/build.sh
build="${MT_BUILD_DIR:-build}"
report="$build/standalone-report.json"
"$build/worker/mtworker" --standalone --model lenet5 --dataset fashion-mnist --batch 64 --epochs 1 \
  --lr 0.05 --momentum 0.9 --threads "$(nproc)" --report "$report" "$@"
grep -E '"(test_accuracy|samples_per_second)"' "$report"
