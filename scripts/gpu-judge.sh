#!/usr/bin/env bash
# On a GPU machine, after scripts/gpu-test.sh has built kforge: the judge attacked on all of KernelBench
# at its real sizes.
#   1. import KernelBench (levels $KFORGE_KB_LEVELS, default 1,2,3) with CUDA packages: the derived small
#      variants, noise outputs, degenerate/nondeterministic tasks and input domains are measured here;
#   2. `kforge tasks check`: every task ok or counted apart (ill_conditioned, degenerate, nondeterministic);
#   3. `kforge tasks audit`: no-work candidates against every task; none may pass a judgeable task;
#   4. the candidates of tests/verify/kernelbench_cheats/ (which KernelBench's own eval accepts) through
#      `kforge verify`, each against its expected status;
#   5. scripts/bench_kb_scale.py (cold verify, batch throughput) unless KFORGE_KB_BENCH=0.
# Usage: scripts/gpu-judge.sh KERNELBENCH_DIR. Logs go to $OUT or build/gpu-judge/.
set -uo pipefail
cd "$(dirname "$0")/.."
kb=${1:?usage: scripts/gpu-judge.sh KERNELBENCH_DIR}
out=${OUT:-build/gpu-judge}
root=${KFORGE_KB_TASKS:-build-kb/tasks}
mkdir -p "$out"
step() { echo "== $*" >&2; }
fail=0

if [ "${KFORGE_KB_IMPORT:-1}" = 1 ]; then
  step "import KernelBench (${KFORGE_KB_LEVELS:-1,2,3}) into $root"
  start=$(date +%s)
  build/kforge tasks import kernelbench "$kb" --out "$root" --levels "${KFORGE_KB_LEVELS:-1,2,3}" --device cuda \
    --jobs "${KFORGE_KB_JOBS:-12}" >"$out/import.log" 2>&1 || fail=1
  grep -E "^level|imported" "$out/import.log" | tail -4
  echo "import took $(( $(date +%s) - start )) s"
  echo "notes: $(grep -c 'degenerate:' "$out/import.log") degenerate, $(grep -c 'nondeterministic:' "$out/import.log") nondeterministic, $(grep -c "domain '" "$out/import.log") with a domain, $(grep -c 'tolerance derived' "$out/import.log") tolerance derived, $(grep -c 'no small variant' "$out/import.log") without a small variant"
  grep -E "degenerate:|nondeterministic:|tolerance derived|FAIL" "$out/import.log" | cut -c1-220
fi

step "tasks check"
start=$(date +%s)
build/kforge tasks check "$root" ${KFORGE_KB_FILTER:+--filter "$KFORGE_KB_FILTER"} >"$out/tasks-check.txt" 2>"$out/tasks-check.err"
echo "exit $?, took $(( $(date +%s) - start )) s"
grep -v "^ok " "$out/tasks-check.txt" | cut -c1-300 | head -40
tail -2 "$out/tasks-check.err"

step "tasks audit"
start=$(date +%s)
build/kforge tasks audit "$root" ${KFORGE_KB_FILTER:+--filter "$KFORGE_KB_FILTER"} >"$out/audit.txt" 2>"$out/audit.err" || fail=1
echo "exit $?, took $(( $(date +%s) - start )) s"
head -40 "$out/audit.txt" | cut -c1-300
cat "$out/audit.err" | tail -12

step "candidates KernelBench's eval accepts (tests/verify/kernelbench_cheats)"
cheats=tests/verify/kernelbench_cheats
files=$(python3 -c "import json; print(' '.join('$cheats/'+r['file'] for r in json.load(open('$cheats/manifest.json'))))")
build/kforge verify --tasks "$root" --seed 7 $files >"$out/cheats.jsonl" 2>"$out/cheats.err"
cat "$out/cheats.err"
python3 - "$cheats/manifest.json" "$out/cheats.jsonl" <<'PY' || fail=1
import json, sys
rows = json.load(open(sys.argv[1]))
verdicts = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
bad = 0
for row, v in zip(rows, verdicts):
    good = v["status"] in row["expect"].split("|")
    bad += not good
    print(("as expected" if good else "UNEXPECTED"), row["file"], v["status"], v["message"][:150])
if len(verdicts) != len(rows):
    print(f"UNEXPECTED: {len(verdicts)} verdicts for {len(rows)} candidates")
    bad += 1
sys.exit(1 if bad else 0)
PY

if [ "${KFORGE_KB_BENCH:-1}" = 1 ]; then
  step "verify at scale"
  python3 scripts/bench_kb_scale.py "$root" "${KFORGE_KB_N:-64}" 2>&1 | tee "$out/bench-kb-scale.log"
fi
exit $fail
