#!/usr/bin/env bash
# Runs the fuzz targets longer than CI does. They are seeded mutational property tests inside the
# GoogleTest suites (tests/fakes/fuzz.h): ctest runs each for 2 s with seed 1; this script runs
# them for SECONDS each (default 60) with SEED (default: a new one each run).
#   scripts/fuzz.sh [SECONDS] [SEED]
# Each target prints its seeds, corpus, executions and time; a failure prints the input that
# caused it (a fatal signal prints it before the process dies). Exit status 1 when any failed.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${KFORGE_BUILD_DIR:-build}
seconds=${1:-60}
seed=${2:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
cmake --build "$build" --target common_test dataset_test verify_test cuda_test generate_test skill_test cli_test >/dev/null || { echo "fuzz: build failed" >&2; exit 2; }
echo "fuzz: $seconds s per target, seed $seed (KFORGE_FUZZ_SEED=$seed reproduces the run)"
status=0
for binary in common_test dataset_test verify_test cuda_test generate_test skill_test cli_test; do
  KFORGE_FUZZ_SECONDS=$seconds KFORGE_FUZZ_SEED=$seed "$build/$binary" --gtest_filter='*FuzzTest.*' \
    --gtest_brief=1 || status=1
done
exit $status
