#!/usr/bin/env bash
# On a GPU machine, after scripts/gpu-test.sh has built kforge: KernelBench at its real sizes.
#   1. import KernelBench (levels from $KFORGE_KB_LEVELS, default 1,2,3) with CUDA packages;
#   2. `kforge tasks check` over every imported problem (pass/fail, peak memory against footprint);
#   3. plan v2 (a library GEMM and a fused epilogue) verified and benched on level2/76_Gemm_Add_ReLU;
#   3b. `kforge generate` with a replay teacher (examples/teacher/kernelbench_level1.jsonl) on level-1 tasks;
#   3c. `kforge report` of that run and KernelBench's own judge (scripts/kb-judge.sh) on its kernelbench export;
#   3d. the same for plan v2 solutions (examples/teacher/kernelbench_plan_v2.jsonl: op steps, item: arguments);
#       KFORGE_KB_JUDGE=0 skips both judges, KFORGE_KB_JUDGE_V2 sets this one alone;
#   4. scripts/bench-generate.sh (64 episodes in flight against a fake teacher) unless KFORGE_KB_GENBENCH=0;
#   5. scripts/bench_kb_scale.py (cold verify, batch throughput, phase split) unless KFORGE_KB_BENCH=0.
# Usage: scripts/gpu-kb.sh KERNELBENCH_DIR (a KernelBench checkout holding level1/ ...). Logs go to $OUT or
# build/gpu-kb/.
set -uo pipefail
cd "$(dirname "$0")/.."
kb=${1:?usage: scripts/gpu-kb.sh KERNELBENCH_DIR}
out=${OUT:-build/gpu-kb}
root=${KFORGE_KB_TASKS:-build-kb/tasks}
mkdir -p "$out"
step() { echo "== $*" >&2; }
fail=0

step "import KernelBench (${KFORGE_KB_LEVELS:-1,2,3}) into $root"
start=$(date +%s)
build/kforge tasks import kernelbench "$kb" --out "$root" --levels "${KFORGE_KB_LEVELS:-1,2,3}" --device cuda \
  --jobs "${KFORGE_KB_JOBS:-8}" >"$out/import.log" 2>&1 || fail=1
tail -3 "$out/import.log"
echo "import took $(( $(date +%s) - start )) s"

step "tasks check"
start=$(date +%s)
build/kforge tasks check "$root" ${KFORGE_KB_FILTER:+--filter "$KFORGE_KB_FILTER"} >"$out/tasks-check.txt" 2>"$out/tasks-check.err"
echo "exit $?, took $(( $(date +%s) - start )) s"
grep -v "^ok " "$out/tasks-check.txt" | head -40
cat "$out/tasks-check.err" | tail -3

step "plan v2 on level 2 at its real size: the GEMM as a library op, a fused bias+ReLU kernel"
mkdir -p "$out/kb-l2/level2" && cp "$kb/level2/76_Gemm_Add_ReLU.py" "$out/kb-l2/level2/"
build/kforge tasks import kernelbench "$out/kb-l2" --levels 2 --out "$root" --device cuda >"$out/import-l2.log" 2>&1 ||
  { tail -3 "$out/import-l2.log"; fail=1; }
build/kforge verify --tasks "$root" examples/plan_v2/kb_level2_76_gemm_add_relu.json \
  examples/plan_v2/kb_level1_37_frobenius_item.json >"$out/plan-v2.jsonl" 2>"$out/plan-v2.err" || fail=1
cat "$out/plan-v2.err"
python3 -c "
import json
for l in open('$out/plan-v2.jsonl'):
    v = json.loads(l)
    print(v['task'], v['status'], v['message'][:200], 'plan_split', v['timing'].get('plan_split'), 'library_ops', v['checks'].get('library_ops'), 'peak/budget', v['memory'] and (v['memory']['peak_device_bytes'], v['memory']['budget_bytes']))
"
build/kforge bench --max-time 3 --tasks "$root" examples/plan_v2/kb_level2_76_gemm_add_relu.json >"$out/plan-v2-bench.jsonl" 2>"$out/plan-v2-bench.err" || fail=1
cat "$out/plan-v2-bench.err"
python3 -c "
import json
for l in open('$out/plan-v2-bench.jsonl'):
    b = json.loads(l)
    print(b['task'], b['status'], 'candidate', b.get('candidate', {}).get('median_ms'), 'reference', b.get('reference', {}).get('median_ms'), 'plan_split', b.get('plan_split'), 'library_ops', b.get('library_ops'))
"

step "generate at real sizes (replay teacher, level 1)"
start=$(date +%s)
build/kforge generate --tasks "$root" --teacher replay:examples/teacher/kernelbench_level1.jsonl \
  --filter 'kernelbench/level1/19_ReLU,kernelbench/level1/23_Softmax,kernelbench/level1/47_Sum_reduction_over_a_dimension' \
  --model replay-kernelbench --max-turns 3 --concurrency 3 --out "$out/generate-run" 2>"$out/generate.err" || fail=1
echo "generate took $(( $(date +%s) - start )) s"
cat "$out/generate.err"
python3 scripts/trajectory_summary.py "$out/generate-run/trajectories.jsonl" || fail=1

step "report, and KernelBench's own judge on the run's kernelbench export"
build/kforge report "$out/generate-run" --html "$out/report.html" 2>&1 | tail -25 || fail=1
build/kforge export "$out/generate-run" --format kernelbench --tasks "$root" --out "$out/kb-export" --force \
  2>"$out/kb-export.err" || { cat "$out/kb-export.err"; fail=1; }
if [ "${KFORGE_KB_JUDGE:-1}" = 1 ]; then
  start=$(date +%s)
  KB_JOBS=8 KB_GPU_JOBS=2 scripts/kb-judge.sh "$out/kb-export" "$kb" "$out/kb-judge.jsonl" 2>&1 | tail -6 || fail=1
  echo "judging took $(( $(date +%s) - start )) s"
fi

step "plan v2 through generate, export and KernelBench's judge (a library GEMM with a fused epilogue; a device scalar)"
build/kforge generate --tasks "$root" --teacher replay:examples/teacher/kernelbench_plan_v2.jsonl \
  --filter 'kernelbench/level2/76_Gemm_Add_ReLU,kernelbench/level1/37_FrobeniusNorm_' \
  --model replay-kernelbench --max-turns 1 --concurrency 2 --out "$out/generate-v2" 2>"$out/generate-v2.err" || fail=1
tail -3 "$out/generate-v2.err"
python3 scripts/trajectory_summary.py "$out/generate-v2/trajectories.jsonl" || fail=1
build/kforge export "$out/generate-v2" --format kernelbench --tasks "$root" --out "$out/kb-export-v2" --force \
  2>"$out/kb-export-v2.err" || fail=1
cat "$out/kb-export-v2.err"
ls "$out/kb-export-v2"
if [ "${KFORGE_KB_JUDGE_V2:-${KFORGE_KB_JUDGE:-1}}" = 1 ]; then
  KB_JOBS=2 KB_GPU_JOBS=2 scripts/kb-judge.sh "$out/kb-export-v2" "$kb" "$out/kb-judge-v2.jsonl" 2>&1 | tail -6 || fail=1
fi

if [ "${KFORGE_KB_GENBENCH:-1}" = 1 ]; then
  step "generate orchestration: ${KFORGE_KB_EPISODES:-64} episodes in flight, a teacher answering in 2 s"
  scripts/bench-generate.sh "$root" kernelbench/level1/19_ReLU "${KFORGE_KB_EPISODES:-64}" 2 2>&1 | tee "$out/bench-generate.log" || fail=1
fi

if [ "${KFORGE_KB_BENCH:-1}" = 1 ]; then
  step "verify at scale"
  python3 scripts/bench_kb_scale.py "$root" "${KFORGE_KB_N:-64}" 2>&1 | tee "$out/bench-kb-scale.log"
fi
exit $fail
