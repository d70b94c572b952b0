#!/usr/bin/env bash
# On a GPU machine, after kforge is built: `kforge skill eval` through real verification. A scripted
# student (scripts/skill_student.py) answers with the verified kernels of the replay cassettes, or the
# same kernels broken so that the GPU check fails: 3 of 4 samples right with the skill in its prompt,
# 1 of 4 without it or with the placebo. Expected: lift 0.5 on every counted task, "beneficial", the
# softmax tasks left out (the skill's own family).
# Usage: scripts/gpu-skill-eval.sh [KB_TASKS]  (KB_TASKS: a KernelBench import holding
# kernelbench/level1/{19_ReLU,23_Softmax,47_Sum_reduction_over_a_dimension}, e.g. build-kb/tasks from
# scripts/gpu-kb.sh; without it only the demo tasks run). Output under $OUT or build/gpu-skill-eval/.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build/gpu-skill-eval}
port=${KFORGE_SKILL_PORT:-18931}
rm -rf "$out" && mkdir -p "$out/tasks" "$out/skills/softmax-rows/references" "$out/skills/softmax-rows/evals"
ln -s "$(pwd)/build/tasks/demo" "$out/tasks/demo"
[ -n "${1:-}" ] && ln -s "$(realpath "$1")/kernelbench" "$out/tasks/kernelbench"

skill=$out/skills/softmax-rows
cat >"$skill/SKILL.md" <<'MD'
---
name: softmax-rows
description: Row-wise softmax and reductions on NVIDIA GPUs; use for softmax, log-softmax and row reductions.
license: MIT
metadata:
  source: scripts/gpu-skill-eval.sh
---
# Row reductions

Marker: use one warp per row and keep the running maximum in a register.
See [the softmax kernel](references/softmax.md).
MD
printf '# Softmax\n\nA verified softmax kernel would be here.\n' >"$skill/references/softmax.md"
printf '{"skill_name": "softmax-rows", "families": ["softmax"], "evals": [{"id": 1, "task": "kernelbench/level1/23_Softmax", "family": "softmax"}]}\n' \
  >"$skill/evals/evals.json"
build/kforge skill check "$skill"

python3 scripts/skill_student.py --port "$port" --marker "Marker: use one warp per row" --right none=1,placebo=1,skill=3 \
  --cassette examples/teacher/kernelbench_level1.jsonl --cassette examples/teacher/demo.jsonl &
student=$!
trap 'kill $student 2>/dev/null' EXIT
sleep 1

start=$(date +%s)
OPENAI_API_KEY=none build/kforge skill eval "$skill" --tasks "$out/tasks" --teacher openai \
  --base-url "http://127.0.0.1:$port/v1" --model scripted-student --no-probe --max-turns 1 --samples 4 \
  --holdout relu,softmax,sum_reduction_over_a_dimension,vector_add,row_sum --out "$out/eval" | tee "$out/eval.txt"
echo "skill eval took $(( $(date +%s) - start )) s"
python3 - "$out/eval/eval.json" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))
m = e["models"][0]
print("tasks", e["tasks"], "left out", [l["task"] for l in e["left_out"]])
for arm, a in m["arms"].items():
    print(arm, "correct", a["correct"], "/", a["episodes"], "fast_p", a["fast_p"], "failures", a["failures"])
print("skill_vs_none", {k: m["lifts"]["skill_vs_none"][k] for k in ("lift", "low", "high", "mcnemar")}, m["verdict"])
PY
