#!/usr/bin/env bash
# Verify throughput and latency on a GPU machine (needs build/tasks from `kforge tasks build`):
#   1. one `kforge verify` of a level-1-sized candidate, whole process, cold (no CUBIN cache);
#   2. a batch of N distinct candidates (default 200) through one process.
# Prints where the time goes: process start, compile, the GPU worker (CUDA init, reference, trials).
set -euo pipefail
cd "$(dirname "$0")/.."
kforge=${KFORGE:-build/kforge}
tasks=${KFORGE_TASKS:-build/tasks}
n=${1:-200}
work=$(mktemp -d)
export KFORGE_CACHE_DIR=$work/cache
now() { date +%s%N; }
ms() { echo $(( ($2 - $1) / 1000000 )); }

t0=$(now); "$kforge" --version >/dev/null; t1=$(now)
echo "process start (kforge --version): $(ms $t0 $t1) ms"
for i in 1 2; do
  t0=$(now); echo '{"op":"hello"}' | "$kforge" worker >/dev/null; t1=$(now)
  echo "worker start to first reply (CUDA context + LibTorch load, overlapped), run $i: $(ms $t0 $t1) ms"
done
t0=$(now); "$kforge" verify --compile-only --no-cache --tasks "$tasks" examples/demo/relu.json >/dev/null 2>&1 || true; t1=$(now)
echo "compile-only verify, cold: $(ms $t0 $t1) ms"
for i in 1 2 3; do
  t0=$(now); "$kforge" verify --no-cache --tasks "$tasks" examples/demo/relu.json >"$work/one.jsonl" 2>/dev/null || true; t1=$(now)
  echo "full verify, cold process, run $i: $(ms $t0 $t1) ms ($(python3 -c "import json;v=json.load(open('$work/one.jsonl'));print(v['status'], 'compile %.0f ms' % v['compile']['ms'])"))"
done

python3 - "$n" "$work/batch.jsonl" <<'PY'
import glob, json, sys
n, out = int(sys.argv[1]), sys.argv[2]
sols = [json.load(open(f)) for f in sorted(glob.glob("examples/demo/*.json") + glob.glob("examples/core/*.json"))]
with open(out, "w") as f:
    for i in range(n):
        s = dict(sols[i % len(sols)])
        s["source"] = f"// candidate {i}\n" + s["source"]  # distinct source: no cache hits
        f.write(json.dumps(s) + "\n")
PY
t0=$(now); "$kforge" verify --no-cache --tasks "$tasks" "$work/batch.jsonl" >"$work/batch.out" 2>"$work/batch.err" || true; t1=$(now)
cat "$work/batch.err"
python3 - "$work/batch.out" "$(ms $t0 $t1)" <<'PY'
import json, sys, collections
vs = [json.loads(l) for l in open(sys.argv[1])]
wall = float(sys.argv[2]) / 1000
c = collections.Counter(v["status"] for v in vs)
comp = sorted(v["compile"]["ms"] for v in vs if v.get("compile"))
print(f"batch: {len(vs)} candidates in {wall:.1f} s = {len(vs)/wall:.2f} candidates/s; statuses {dict(c)}")
bad = collections.Counter((v["task"], v["status"], v["message"][:120]) for v in vs if v["status"] != "ok")
for (task, status, message), k in bad.most_common(5):
    print(f"  {k} x {task}: {status}: {message}")
if comp:
    print(f"compile ms p50 {comp[len(comp)//2]:.0f} p90 {comp[int(len(comp)*.9)]:.0f} (overlapped with GPU work)")
PY
rm -rf "$work"
