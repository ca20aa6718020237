#!/usr/bin/env bash
# The main job on one machine: install what it needs, build mthub, mtworker
# and mtmodel, start a hub and three workers, train LeNet-5 on Fashion-MNIST
# for one epoch, and print the final test accuracy. Extra arguments go to
# mthub (e.g. --epochs 3). Only the main job's packages and programs: the
# test suite's (GoogleTest, Chromium, clang, ...) are deploy/test.sh's.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${MT_BUILD_DIR:-build}"
start=$SECONDS
# One line per stage, with the time so far: a first run spends minutes in
# apt-get and the compiler before the hub's first line.
stage() { echo "run-local.sh: [$1/3, $((SECONDS - start)) s] $2"; }

stage 1 "installing the packages mthub, mtworker and mtmodel need (deploy/install-deps.sh)"
deploy/install-deps.sh
# A tree configured before (by deploy/test.sh, say) keeps its settings; a
# new one is configured without the tests, which need packages of their own.
configure=()
[ -f "$build/CMakeCache.txt" ] || configure=(-DMT_TESTS=OFF)
stage 2 "building mthub, mtworker and mtmodel into $build (deploy/build.sh)"
deploy/build.sh "${configure[@]}" --target mthub --target mtworker --target mtmodel
stage 3 "training: a hub and 3 workers, LeNet-5 on Fashion-MNIST (deploy/local-cluster.sh)"
exec deploy/local-cluster.sh --workers 3 -- --model lenet5 --dataset fashion-mnist --epochs 1 "$@"
