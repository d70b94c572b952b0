#!/usr/bin/env bash
# On a GPU machine: build kforge, build the CUDA reference packages of the bundled tasks, run the
# tests labelled gpu, then end-to-end smokes (the README's demo, --sanitize, bench) and the verify
# benchmark. Offline-safe.
# Logs go to $OUT when set, else to build/gpu-test/.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build/gpu-test}
mkdir -p "$out"
step() { echo "== $*" >&2; }
fail=0

step "setup and build"
start=$(date +%s)
if ! scripts/setup.sh --tests >"$out/setup.log" 2>&1; then
  cmake --build build -- -k 0 >"$out/build-all.log" 2>&1
  grep -E "error:" "$out/build-all.log" | sort -u | head -40
  exit 1
fi
tail -3 "$out/setup.log"
echo "setup, build and bundled task packages took $(( $(date +%s) - start )) s"
build/kforge --version
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader || true

step "reference packages of the test-only tasks (setup.sh built the bundled ones)"
build/kforge tasks build tests/verify/tasks --out build/tasks --device cuda >"$out/tasks-build.log" 2>&1 || { tail -20 "$out/tasks-build.log"; fail=1; }
# A KernelBench-style module (sizes as module-level integers): imported, it gets the derived small variant.
build/kforge tasks import module tests/verify/modules/softmax_rows.py --id kbstyle/softmax_rows --out build/tasks \
  --device cuda >>"$out/tasks-build.log" 2>&1 || { tail -20 "$out/tasks-build.log"; fail=1; }
cp build/tasks-build.log "$out/bundled-tasks-build.log" 2>/dev/null

step "gpu tests"
ctest --test-dir build -L gpu --output-on-failure 2>&1 | tee "$out/ctest-gpu.log" | tail -40
[ "${PIPESTATUS[0]}" = 0 ] || fail=1

step "demo (README main command: generate on tasks/demo with the replay teacher)"
KFORGE_DEMO_RUN="$out/demo-run" scripts/demo.sh 2>"$out/demo.err" || fail=1
cat "$out/demo.err"
python3 scripts/trajectory_summary.py "$out/demo-run/trajectories.jsonl" || fail=1

step "verify the bundled demo solutions"
build/kforge verify --tasks build/tasks examples/demo/*.json >"$out/verify-demo.jsonl" 2>"$out/verify-demo.err" || fail=1
cat "$out/verify-demo.err"
step "verify --sanitize (compute-sanitizer memcheck around the worker)"
build/kforge verify --sanitize --tasks build/tasks examples/demo/relu.json examples/core/softmax.json \
  >"$out/sanitize.jsonl" 2>"$out/sanitize.err"
echo "exit $?"; cat "$out/sanitize.err"
python3 -c "
import json
for l in open('$out/sanitize.jsonl'):
    v=json.loads(l); print(v['task'], v['status'], v['checks'].get('sanitizer'), v['message'][:160])
"

step "judge audit: no-work candidates against every bundled and test-only task (exit 1 when one is accepted)"
# Every suite but large/ (tasks made to exceed the device's memory: a harness_error by design).
: >"$out/audit-bundled.txt"; : >"$out/audit-bundled.err"
for suite in build/tasks/*/; do
  suite=$(basename "$suite")
  [ "$suite" = large ] && continue
  build/kforge tasks audit build/tasks --filter "$suite/*" >>"$out/audit-bundled.txt" 2>>"$out/audit-bundled.err" || fail=1
done
cat "$out/audit-bundled.txt" "$out/audit-bundled.err"

step "timing audit: correct kernels that cheat on speed, timed on the bundled tasks (exit 1 when one is believed)"
: >"$out/audit-timing.txt"; : >"$out/audit-timing.err"
for suite in build/tasks/*/; do
  suite=$(basename "$suite")
  [ "$suite" = large ] && continue
  build/kforge tasks audit build/tasks --timing --filter "$suite/*" >>"$out/audit-timing.txt" 2>>"$out/audit-timing.err" || fail=1
done
cat "$out/audit-timing.txt" "$out/audit-timing.err"
# The controls (the memo with the defence off) must take their shortcut where the memo fits: else the
# audit could not tell a cheat from an honest kernel.
if grep -q "^control silent" "$out/audit-timing.txt"; then echo "a timing control did not take its shortcut"; fail=1; fi

step "bench (demo solutions against their references)"
build/kforge bench --tasks build/tasks examples/demo/*.json >"$out/bench-demo.jsonl" 2>"$out/bench-demo.err" || fail=1
cat "$out/bench-demo.err"

if [ "${KFORGE_BENCH:-1}" = 1 ]; then
  step "verify benchmark"
  scripts/bench-verify.sh "${KFORGE_BENCH_N:-200}" 2>&1 | tee "$out/bench-verify.log"
fi
exit $fail
