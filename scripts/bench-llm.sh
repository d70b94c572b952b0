#!/usr/bin/env bash
# Builds and runs the LLM client throughput benchmark: by default 1000 requests at 64 in flight
# against a local server that answers each after 200 ms. Extra arguments go to the benchmark
# (--requests N --in-flight K --delay-ms D). BUILD_DIR overrides the build directory.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
if [[ ! -f "$build/build.ninja" ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DKFORGE_WITH_TORCH=OFF -DKFORGE_BUILD_TESTS=OFF
fi
ninja -C "$build" -j"${JOBS:-2}" llm_throughput_bench
"$build/llm_throughput_bench" "$@"
