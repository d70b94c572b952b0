#!/usr/bin/env bash
# Sets up a machine for kforge and builds it. Idempotent: run it again at any time.
#   scripts/setup.sh [--tests] [--finetune]
#   1. system packages (Debian/Ubuntu, only those missing, only where apt can install);
#   2. Python with torch: $KFORGE_PYTHON, else the venv $KFORGE_VENV (default ~/.cache/kforge/venv), else a python3
#      that already has torch (a GPU machine without network), else a new venv from PyPI with
#      scripts/requirements.txt;
#   3. configure and build into build/ (or $KFORGE_BUILD_DIR) what kforge runs: the kforge binary, its NVRTC
#      helper (kforge-nvrtc) and its GPU worker library (libkforge_worker.so);
#   4. the reference packages of the bundled tasks, on a GPU machine or with --tests.
# --tests (or KFORGE_SETUP_TESTS=1) also builds the test suites (benchmarks build on demand, from their
# scripts), and installs what the tests use: pytest, junitparser and the fine-tuning packages. --finetune
# (or KFORGE_SETUP_FINETUNE=1) installs the fine-tuning packages of scripts/requirements-finetune.txt
# (finetune-launch, scripts/eval-student.sh).
# The last line gives the wall time of each phase.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build_dir=${KFORGE_BUILD_DIR:-build}
venv=${KFORGE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/kforge/venv}

say() { echo "setup: $*" >&2; }

with_tests=${KFORGE_SETUP_TESTS:-0}
with_finetune=${KFORGE_SETUP_FINETUNE:-0}
for arg in "$@"; do
  case $arg in
    --tests) with_tests=1 ;;
    --finetune) with_finetune=1 ;;
    -h | --help) sed -n '2,14p' "$0" | cut -c3- >&2; exit 0 ;;
    *) say "unknown option $arg (expected --tests or --finetune)"; exit 2 ;;
  esac
done
[ "$with_tests" = 1 ] && with_finetune=1

# Wall time of each phase, printed in one line at the end.
setup_start=$(date +%s)
phase_start=$setup_start
phase_times=()
phase_done() {
  local now
  now=$(date +%s)
  phase_times+=("$1 $((now - phase_start)) s")
  phase_start=$now
}

need_headers=(/usr/include/CLI/CLI.hpp /usr/include/nlohmann/json.hpp /usr/include/spdlog/spdlog.h
              /usr/include/x86_64-linux-gnu/curl/curl.h /usr/include/gtest/gtest.h /usr/include/fmt/format.h
              /usr/include/openssl/evp.h)
missing=0
for h in "${need_headers[@]}"; do
  [ -e "$h" ] || [ -e "${h/x86_64-linux-gnu\//}" ] || missing=1
done
if [ $missing = 1 ] || ! command -v cmake >/dev/null || ! command -v ninja >/dev/null; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    say "installing system packages"
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake ninja-build g++ \
        libcli11-dev nlohmann-json3-dev libspdlog-dev libfmt-dev libcurl4-openssl-dev libssl-dev libgtest-dev python3-venv \
        >/dev/null; }; then
      say "apt-get could not install the build dependencies; trying to build with what is here"
    fi
  else
    say "missing build dependencies and cannot apt-get install them (see README.md, Requirements)"
  fi
fi
phase_done packages

has_torch() { "$1" -c "import torch, safetensors, numpy" >/dev/null 2>&1; }
if [ -n "${KFORGE_PYTHON:-}" ]; then
  python=$KFORGE_PYTHON
elif [ -x "$venv/bin/python3" ] && has_torch "$venv/bin/python3"; then
  python=$venv/bin/python3
elif has_torch python3; then
  python=$(command -v python3)
else
  say "creating $venv with torch (first run downloads several GB)"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q -r scripts/requirements.txt
  python=$venv/bin/python3
fi
has_torch "$python" || { say "$python lacks torch/safetensors/numpy"; exit 2; }
if [ "$with_tests" = 1 ]; then
  "$python" -c "import pytest" >/dev/null 2>&1 || "$python" -m pip install -q pytest ||
    say "pytest unavailable; Python tests will be skipped"
  "$python" -c "import junitparser" >/dev/null 2>&1 || "$python" -m pip install -q junitparser==5.0.3 ||
    say "junitparser unavailable; the JUnit report test will be skipped"
fi
# The fine-tuning stack: the pins of requirements-finetune.txt (torch stays whatever this Python has),
# installed when a package is missing or off its pin.
finetune_reqs=scripts/requirements-finetune.txt
finetune_ready() {
  "$python" -c "import transformers, trl, peft, accelerate, datasets, tokenizers, yaml, fastapi, uvicorn, openai" \
    >/dev/null 2>&1 && "$python" - "$finetune_reqs" <<'EOF' >/dev/null 2>&1
import importlib.metadata, re, sys
for line in open(sys.argv[1]):
    pin = re.match(r"\s*([A-Za-z0-9_.-]+)(\[[^]]*\])?==([^\s#;]+)", line)
    if pin and importlib.metadata.version(pin.group(1)) != pin.group(3):
        sys.exit(1)
EOF
}
if [ "$with_finetune" = 1 ] && ! finetune_ready; then
  say "installing the fine-tuning packages into $python"
  finetune_log=$(mktemp)
  if ! "$python" -m pip install -q -r "$finetune_reqs" >"$finetune_log" 2>&1 || ! finetune_ready; then
    tail -3 "$finetune_log" >&2
    say "could not install the fine-tuning packages (pip install -r $finetune_reqs);"
    say "finetune-launch cannot train with $python, and its training test will fail"
  fi
  rm -f "$finetune_log"
fi
say "python: $python (torch $("$python" -c 'import torch; print(torch.__version__)'))"
phase_done python

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B "$build_dir" "${generator[@]}" -DKFORGE_PYTHON="$python" >/dev/null
phase_done configure
# Without --tests only the kforge target, which brings what it runs (kforge-nvrtc, libkforge_worker.so).
targets=(--target kforge)
[ "$with_tests" = 1 ] && targets=()
cmake --build "$build_dir" "${targets[@]}" -j "$(nproc)"
if [ "$with_tests" = 1 ]; then say "built $build_dir/kforge and the tests"; else say "built $build_dir/kforge"; fi
phase_done build

# Reference packages of the bundled tasks: CUDA ones (and CPU ones) on a GPU machine, where verify, bench
# and generate judge with them; CPU ones with --tests, for the parity tests. Without a GPU the demo only
# compiles, and needs none.
device=
if nvidia-smi -L >/dev/null 2>&1; then
  device=cuda
elif [ "$with_tests" = 1 ]; then
  device=cpu
fi
if [ -n "$device" ] && "$build_dir/kforge" --version | grep -q "^libtorch [0-9]"; then
  "$build_dir/kforge" tasks build tasks --out "$build_dir/tasks" --device $device >"$build_dir/tasks-build.log" 2>&1 ||
    { tail -5 "$build_dir/tasks-build.log" >&2; say "building the bundled tasks failed (log: $build_dir/tasks-build.log)"; exit 1; }
  say "built the bundled tasks ($device) into $build_dir/tasks"
fi
phase_done "reference packages"
say "took $(($(date +%s) - setup_start)) s: $(printf '%s, ' "${phase_times[@]}" | sed 's/, $//')"
