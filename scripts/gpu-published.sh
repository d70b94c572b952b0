#!/usr/bin/env bash
# On a GPU machine, after scripts/gpu-test.sh has built kforge: kforge against KernelBench's own judge on
# kernels other people published for KernelBench (tests/verify/published/, listed in its manifest.json).
#   1. import the problems the manifest names into $KFORGE_KB_TASKS (default build-kb/tasks), those whose
#      task.json or CUDA package is missing only (scripts/export_reference.py bulk-kernelbench --only, per
#      level, as scripts/gpu-judge.sh imports extra problems);
#   2. `kforge verify --tasks ROOT --seed 7` on every published solution;
#   3. KernelBench's judge on the same kernels: a trajectory record per solution
#      (scripts/published_records.py), `kforge export --format kernelbench --include-incorrect`, then
#      scripts/kb-judge.sh (KernelBench's eval_kernel_against_ref on each ModelNew file);
#   4. the agreement table: kernel, kforge's status and checks.shape_general, KernelBench's verdict, agree or
#      disagree (kforge correct means status ok, KernelBench's meaning: the problem's own sizes), the
#      manifest's expectation beside it, and the agreement percentage over the kernels both judged
#      (scripts/published_agreement.py).
# Usage: scripts/gpu-published.sh KERNELBENCH_DIR (a KernelBench checkout with level1/ ... and
# harness/kernelbench/eval.py).
# Logs and results go to $OUT or build/gpu-published/: verdicts.jsonl, kb-judge.jsonl, agreement.jsonl and
# agreement.md (the table in Markdown). env: KB_JOBS (ModelNew builds at once, default 8), KB_GPU_JOBS (files
# judged at once on the GPU, default 1: the level-1 problems hold several GiB a tensor), KB_TRIALS, KB_TIMEOUT
# (scripts/kb-judge.sh), KFORGE_KB_JOBS (import jobs,
# default 8), KFORGE_PUBLISHED_MIN_AGREEMENT (percent, default 95).
# Exit 0 when every step ran and the agreement is at least the minimum, 1 otherwise. KernelBench's half is the
# long one: every ModelNew file builds with nvcc (up to a minute or two each, KB_JOBS at a time), then is
# judged (scripts/kb-judge.sh).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
kb=${1:?usage: scripts/gpu-published.sh KERNELBENCH_DIR}
out=${OUT:-build/gpu-published}
root=${KFORGE_KB_TASKS:-build-kb/tasks}
published=tests/verify/published
mkdir -p "$out"
step() { echo "== $*" >&2; }
fail=0
if [ ! -x build/kforge ]; then
  echo "gpu-published: build/kforge is missing: run scripts/gpu-test.sh first" >&2
  exit 1
fi

step "import the problems the manifest names (missing ones only) into $root"
if ! python3 - "$published/manifest.json" "$root" "$kb" >"$out/import-plan.txt" <<'PY'
import json, os, re, sys
manifest, root, kb = sys.argv[1:4]
missing = {}
for entry in json.load(open(manifest)):
    task = entry["task"]
    doc_path = os.path.join(root, task, "task.json")
    ready = False
    if os.path.exists(doc_path):
        packages = json.load(open(doc_path)).get("artifacts", {}).get("packages", {})
        ready = bool(packages.get("default", {}).get("cuda"))
    if not ready:
        level, stem = task.split("/")[1], task.split("/")[2]
        if not os.path.exists(os.path.join(kb, level, stem + ".py")):
            sys.exit(f"gpu-published: {kb}/{level}/{stem}.py: no such problem")
        missing.setdefault(level[len("level"):], set()).add(stem)
for level, stems in sorted(missing.items()):
    print(level, "^(" + "|".join(re.escape(s) for s in sorted(stems)) + r")\.py$", len(stems))
PY
then
  exit 1
fi
while read -r level regex count; do
  [ -n "$level" ] || continue
  echo "level $level: importing $count problems" >&2
  python3 scripts/export_reference.py bulk-kernelbench "$kb" --out "$root" --levels "$level" --only "$regex" \
    --device cuda --jobs "${KFORGE_KB_JOBS:-8}" >>"$out/import.log" 2>&1 || { tail -5 "$out/import.log" >&2; fail=1; }
done <"$out/import-plan.txt"
[ -s "$out/import-plan.txt" ] || echo "every problem is imported already" >&2

mapfile -t files < <(python3 -c "import json, sys; print('\\n'.join(sys.argv[1] + '/' + e['file'] for e in json.load(open(sys.argv[1] + '/manifest.json'))))" "$published")
step "kforge verify --seed 7 on ${#files[@]} published solutions"
start=$(date +%s)
build/kforge verify --tasks "$root" --seed 7 "${files[@]}" >"$out/verdicts.jsonl" 2>"$out/verify.err"
echo "verify exit $?, took $(( $(date +%s) - start )) s" >&2
tail -2 "$out/verify.err" >&2

step "KernelBench's judge on the same kernels (kforge export --format kernelbench, scripts/kb-judge.sh)"
python3 scripts/published_records.py "$out/verdicts.jsonl" "$out/records.jsonl" "${files[@]}" >"$out/records-map.jsonl" || fail=1
build/kforge export "$out/records.jsonl" --format kernelbench --include-incorrect --tasks "$root" \
  --out "$out/kb-export" --force 2>"$out/kb-export.err" || { cat "$out/kb-export.err" >&2; fail=1; }
tail -3 "$out/kb-export.err" >&2
start=$(date +%s)
KB_JOBS=${KB_JOBS:-8} scripts/kb-judge.sh "$out/kb-export" "$kb" "$out/kb-judge.jsonl" 2>&1 | tail -4
echo "judging took $(( $(date +%s) - start )) s" >&2

step "agreement"
python3 scripts/published_agreement.py "$published/manifest.json" "$out" "${KFORGE_PUBLISHED_MIN_AGREEMENT:-95}" || fail=1
exit $fail
