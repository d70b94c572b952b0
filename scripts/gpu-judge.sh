#!/usr/bin/env bash
# On a GPU machine, after scripts/gpu-test.sh has built kforge: the judge attacked on all of KernelBench
# at its real sizes.
#   1. import KernelBench (levels $KFORGE_KB_LEVELS, default 1,2,3) with CUDA packages: the derived small
#      variants, noise outputs, degenerate/nondeterministic tasks and input domains are measured here;
#   2. the candidates of tests/verify/kernelbench_cheats/ (which KernelBench's own eval accepts) through
#      `kforge verify`, each against its expected status;
#   2b. `kforge bench` on honest kernels of level1/1, 19, 23 and 47 and on correct kernels for 47 that cheat
#      on speed (tests/bench/timing_cheats_kb; KFORGE_KB_TIMING=0 skips it): none timed faster than the
#      honest kernel; and, without the verification, the kernel that stores its output in its own input
#      (sum_input_stash.json) is mismatch on a timed run;
#   3. `kforge tasks audit` (--trials $KFORGE_KB_AUDIT_TRIALS, default 5; stopped after
#      $KFORGE_KB_AUDIT_TIMEOUT s; skipped with KFORGE_KB_AUDIT=0): no-work candidates against every
#      task; none may pass a judgeable task;
#   3b. `kforge tasks audit --timing` (KFORGE_KB_TIMING_AUDIT=0 skips it; stopped after
#      $KFORGE_KB_TIMING_AUDIT_TIMEOUT s): correct kernels that cheat on speed, timed on every task; none
#      may take its shortcut on a checked run or be timed faster than the honest work it wraps;
#   4. `kforge tasks check` (KFORGE_KB_CHECK=0 skips it): every task ok or counted apart (ill_conditioned, degenerate, nondeterministic),
#      and the references' own % of speed of light (costs derived at import): how many sit under 10%,
#      10-50% and over 50% of the floor, per level;
#   5. scripts/bench_kb_scale.py (cold verify, batch throughput) unless KFORGE_KB_BENCH=0.
# Usage: scripts/gpu-judge.sh KERNELBENCH_DIR. Logs go to $OUT or build/gpu-judge/. KFORGE_KB_EXTRA (a regex on
# file names) also imports those problems of levels 2 and 3 when KFORGE_KB_LEVELS leaves them out.
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
  if [ -n "${KFORGE_KB_EXTRA:-}" ]; then  # problems of levels 2 and 3 whose file names match this regex
    python3 scripts/export_reference.py bulk-kernelbench "$kb" --out "$root" --levels 2,3 --only "$KFORGE_KB_EXTRA" \
      --device cuda --jobs "${KFORGE_KB_JOBS:-12}" >>"$out/import.log" 2>&1 || fail=1
  fi
  grep -E "^level|imported" "$out/import.log" | tail -4
  echo "import took $(( $(date +%s) - start )) s"
  grep -E "degenerate:|nondeterministic:|FAIL" "$out/import.log" | cut -c1-220
fi
step "what the import measured, from every task.json"
python3 - "$root" <<'PY'
import json, pathlib, sys
docs = [json.loads(p.read_text()) for p in sorted(pathlib.Path(sys.argv[1]).rglob("task.json"))]
def count(pred): return sum(1 for d in docs if pred(d))
print(f"{len(docs)} tasks: {count(lambda d: any(v['name'] == 'small' for v in d.get('variants', [])))} with the small variant, "
      f"{count(lambda d: d.get('domains'))} with a measured domain, "
      f"{count(lambda d: 'conditioning' in d)} with conditioning, "
      f"{count(lambda d: any(o['noise'] for o in d.get('conditioning', {}).get('outputs', {}).values()))} with a noise output, "
      f"{count(lambda d: 'tolerance' in d)} with a tolerance (derived: tolerance above the default), "
      f"{count(lambda d: 'behaviour' in d)} with behaviour measured")
for d in docs:
    b = d.get("behaviour", {})
    if b.get("degenerate") or b.get("nondeterministic"):
        print("  ", d["id"], "degenerate" if b.get("degenerate") else "nondeterministic", b["outputs"],
              "rerun_mismatches", b["rerun_mismatches"], "variant", b["variant"])
    if "tolerance" in d:
        print("  ", d["id"], "tolerance", d["tolerance"])
PY

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
    good = v["status"] in row["expect"].split("|") and \
        ("shape_general" not in row or v.get("checks", {}).get("shape_general") == row["shape_general"])
    bad += not good
    print(("as expected" if good else "UNEXPECTED"), row["file"], v["status"], v["message"][:150])
if len(verdicts) != len(rows):
    print(f"UNEXPECTED: {len(verdicts)} verdicts for {len(rows)} candidates")
    bad += 1
sys.exit(1 if bad else 0)
PY

if [ "${KFORGE_KB_TIMING:-1}" = 1 ]; then
step "timing at real sizes: honest kernels, and correct kernels that cheat on speed (tests/bench/timing_cheats_kb)"
timing=tests/bench/timing_cheats_kb
files=$(python3 -c "import json; print(' '.join('$timing/'+r['file'] for r in json.load(open('$timing/manifest.json'))))")
build/kforge bench --tasks "$root" --seed 7 $files tests/verify/kernelbench_cheats/l1_19_relu_correct.json \
  tests/verify/kernelbench_cheats/l1_23_softmax_correct.json tests/bench/kernelbench/l1_1_matmul_tiled.json \
  >"$out/timing.jsonl" 2>"$out/timing.err"
echo "exit $?"; cat "$out/timing.err"
python3 - "$timing/manifest.json" "$out/timing.jsonl" <<'PY' || fail=1
import json, sys
rows = json.load(open(sys.argv[1]))
records = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
for r in records:
    c = r.get("candidate") or {}
    print(r["task"].split("/")[-1], r["status"], "median_ms", c.get("median_ms"), "speedup", r.get("speedup"),
          "draws", r.get("input_draws"), "recheck", r.get("recheck_speedup"), "flags", ",".join(r.get("flags", [])),
          r.get("message", "")[:160])
honest = next(r for row, r in zip(rows, records) if row["role"] == "honest")
bad = 0
for row, r in zip(rows, records):
    if row["role"] != "cheat":
        continue
    ms = (r.get("candidate") or {}).get("median_ms")
    faster = r["status"] == "ok" and ms is not None and ms < honest["candidate"]["median_ms"] / 1.25
    bad += faster
    print(("FASTER THAN HONEST" if faster else "not faster"), row["file"], r["status"], ms)
sys.exit(1 if bad else 0)
PY
# A kernel that stores its output in its own input and replays it: the verification would refuse it, so
# it is timed without, and the timed runs' check that the inputs are as they were must.
build/kforge bench --tasks "$root" --seed 7 --no-verify "$timing/sum_input_stash.json" >"$out/timing-stash.jsonl" \
  2>>"$out/timing.err"
python3 - "$out/timing-stash.jsonl" <<'PY' || fail=1
import json, sys
r = json.loads(open(sys.argv[1]).readline())
print("input stash (--no-verify):", r["status"], r["message"][:160])
sys.exit(0 if r["status"] == "mismatch" and "modified input" in r["message"] else 1)
PY
fi

if [ "${KFORGE_KB_AUDIT:-1}" = 1 ]; then
step "tasks audit"
start=$(date +%s)
timeout "${KFORGE_KB_AUDIT_TIMEOUT:-3600}" build/kforge tasks audit "$root" ${KFORGE_KB_FILTER:+--filter "$KFORGE_KB_FILTER"} \
  --trials "${KFORGE_KB_AUDIT_TRIALS:-5}" --json >"$out/audit.jsonl" 2>"$out/audit.err"
echo "exit $?, took $(( $(date +%s) - start )) s"
tail -3 "$out/audit.err"
python3 - "$out/audit.jsonl" <<'PY' || fail=1
import collections, json, sys
tally = collections.defaultdict(lambda: [0, 0, 0])  # tried, accepted, accepted on unjudgeable tasks
tasks = harness = holes = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    tasks += 1
    if r["status"] != "ok":
        harness += 1
        print("harness_error", r["task"], r["message"][:200])
        continue
    for c in r["candidates"]:
        t = tally[c["name"].split(":")[0]]
        t[0] += 1
        if c["accepted"]:
            t[2 if r["unjudgeable"] else 1] += 1
            holes += not r["unjudgeable"]
            print("accepted", r["task"], c["name"], f"(task is {r['unjudgeable']})" if r["unjudgeable"] else "")
print(f"{'candidate':14} {'tried':>6} {'accepted':>9} {'on unjudgeable':>15}")
for name, (tried, acc, unj) in sorted(tally.items()):
    print(f"{name:14} {tried:6} {acc:9} {unj:15}")
print(f"audited {tasks} tasks: {holes} no-work candidates accepted on judgeable tasks, {harness} harness_error")
sys.exit(1 if holes or harness else 0)
PY
fi

if [ "${KFORGE_KB_TIMING_AUDIT:-1}" = 1 ]; then
step "tasks audit --timing"
start=$(date +%s)
timeout "${KFORGE_KB_TIMING_AUDIT_TIMEOUT:-3600}" build/kforge tasks audit "$root" --timing \
  ${KFORGE_KB_FILTER:+--filter "$KFORGE_KB_FILTER"} --json >"$out/audit-timing.jsonl" 2>"$out/audit-timing.err"
echo "exit $?, took $(( $(date +%s) - start )) s"
tail -3 "$out/audit-timing.err"
python3 scripts/timing_audit_summary.py "$out/audit-timing.jsonl" || fail=1
fi

if [ "${KFORGE_KB_CHECK:-1}" = 1 ]; then
step "tasks check"
start=$(date +%s)
build/kforge tasks check "$root" ${KFORGE_KB_FILTER:+--filter "$KFORGE_KB_FILTER"} >"$out/tasks-check.txt" 2>"$out/tasks-check.err"
echo "exit $?, took $(( $(date +%s) - start )) s"
grep -v "^ok " "$out/tasks-check.txt" | cut -c1-300 | head -40
tail -2 "$out/tasks-check.err"
step "PyTorch's references against the roofline (%SOL of one warm run; the lines are in $out/tasks-check.txt)"
python3 - "$out/tasks-check.txt" <<'PY'
import collections, re, sys
bands, without = collections.defaultdict(lambda: [0, 0, 0]), collections.Counter()
for line in open(sys.argv[1]):
    fields = line.split()
    if len(fields) < 2:
        continue
    level = re.search(r"/level(\d+)/", fields[1])
    level = f"level {level.group(1)}" if level else "other"
    sol = re.search(r"%SOL ([0-9.]+)", line)
    if not sol:
        without[level] += 1
        continue
    pct = float(sol.group(1))
    bands[level][0 if pct < 10 else 1 if pct <= 50 else 2] += 1
for level in sorted(set(bands) | set(without)):
    under, middle, over = bands[level]
    print(f"{level}: {under} under 10%, {middle} 10-50%, {over} over 50% of the floor; {without[level]} without a %SOL")
PY
fi

if [ "${KFORGE_KB_BENCH:-1}" = 1 ]; then
  step "verify at scale"
  python3 scripts/bench_kb_scale.py "$root" "${KFORGE_KB_N:-64}" 2>&1 | tee "$out/bench-kb-scale.log"
fi
exit $fail
