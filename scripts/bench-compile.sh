#!/usr/bin/env bash
# Builds and runs the NVRTC compile-latency benchmark: cold and cached p50/p90 per kernel.
#   scripts/bench-compile.sh [repetitions] [arch]     (BUILD_DIR defaults to build)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build}"
if [[ ! -f "$build_dir/build.ninja" ]]; then
  cmake -S . -B "$build_dir" -G Ninja ${KFORGE_PYTHON:+-DKFORGE_PYTHON="$KFORGE_PYTHON"}
fi
ninja -C "$build_dir" -j"${JOBS:-2}" compile_bench
"$build_dir/compile_bench" "${1:-5}" "${2:-sm_90a}"
