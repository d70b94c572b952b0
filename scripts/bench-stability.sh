#!/usr/bin/env bash
# Run-to-run stability of `kforge bench`: the same solutions benched RUNS times (default 5), each run
# a fresh process; prints, per solution, the spread of the candidate's median ((max - min) / mean)
# and of the speedup. Needs a GPU and build/tasks (scripts/setup.sh). KFORGE_BENCH_ARGS adds flags
# (e.g. "--hot"; "--reference" with task ids in place of solutions times references alone).
set -euo pipefail
cd "$(dirname "$0")/.."
kforge=${KFORGE:-build/kforge}
tasks=${KFORGE_TASKS:-build/tasks}
runs=${1:-5}
shift || true
solutions=("$@")
[ ${#solutions[@]} -gt 0 ] || solutions=(examples/core/softmax.json examples/core/layernorm.json
  examples/core/matmul.json examples/core/gelu.json examples/core/conv2d_3x3.json examples/core/cumsum.json)
work=$(mktemp -d)
for i in $(seq 1 "$runs"); do
  "$kforge" bench --tasks "$tasks" --seed 1 ${KFORGE_BENCH_ARGS:-} "${solutions[@]}" >"$work/run$i.jsonl" 2>"$work/run$i.err" || true
  tail -1 "$work/run$i.err"
done
python3 - "$work" "$runs" <<'PY'
import json, sys, statistics
work, runs = sys.argv[1], int(sys.argv[2])
rows, clocks = {}, {}
for i in range(1, runs + 1):
    for line in open(f"{work}/run{i}.jsonl"):
        r = json.loads(line)
        if r["status"] != "ok":
            print(f"run {i}: {r['task']}: {r['status']}: {r['message'][:100]}")
            continue
        subject = r["candidate"] or r["reference"]  # `--reference` records time the reference alone
        speedup = r["speedup"]["ratio"] if r["speedup"] else 1.0
        rows.setdefault(r["task"], []).append((subject["median_ms"], speedup))
        clocks.setdefault(i, []).append(r["sm_clock_mhz"] or 0)
print(f"{'task':22} {'median us (runs)':>50} {'spread':>8} {'speedup spread':>15}")
worst = 0.0
for task, values in rows.items():
    medians = [m for m, _ in values]
    speedups = [s for _, s in values]
    spread = (max(medians) - min(medians)) / statistics.mean(medians)
    sspread = (max(speedups) - min(speedups)) / statistics.mean(speedups)
    worst = max(worst, spread)
    print(f"{task:22} {' '.join(f'{m * 1000:.2f}' for m in medians):>50} {spread * 100:7.2f}% {sspread * 100:14.2f}%")
print("median SM clock per run (MHz): " + " ".join(f"{statistics.median(c):.0f}" for c in clocks.values()))
print(f"largest run-to-run spread of a median: {worst * 100:.2f}% over {runs} runs (target: under 2%)")
PY
rm -rf "$work"
