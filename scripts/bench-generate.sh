#!/usr/bin/env bash
# Orchestration benchmark of `kforge generate` on a GPU machine: N episodes in flight against a fake
# OpenAI-compatible teacher that answers in DELAY seconds (scripts/fake_teacher.py), on a task at its
# real size. Prints the GPU's busy fraction (nvidia-smi, sampled every 100 ms while generate runs) and
# generate's own CPU time per turn (what is spent neither waiting for the teacher nor on the GPU).
# All episodes start at once (--cache-warmup 0): the fake teacher keeps no prompt cache to warm.
# Usage: scripts/bench-generate.sh TASK_ROOT TASK_ID [EPISODES=64] [DELAY=2]
set -euo pipefail
cd "$(dirname "$0")/.."
root=${1:?usage: scripts/bench-generate.sh TASK_ROOT TASK_ID [EPISODES] [DELAY]}
task=${2:?task id}
episodes=${3:-64}
delay=${4:-2}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
python3 scripts/fake_teacher.py --port "$port" --delay "$delay" --cassette examples/teacher/kernelbench_level1.jsonl &
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/v1/models" >/dev/null && break; sleep 0.1; done
nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 100 >"$work/util.txt" &
smi=$!
start=$(date +%s.%N)
build/kforge generate --tasks "$root" --filter "$task" --teacher openai --model fake-teacher \
  --base-url "http://127.0.0.1:$port/v1" --samples "$episodes" --concurrency "$episodes" --max-turns 2 \
  --target-speedup 1000 --bench-time 0.5 --cache-warmup 0 --out "$work/run" 2>"$work/generate.err"
end=$(date +%s.%N)
kill $smi 2>/dev/null || true
tail -2 "$work/generate.err"
python3 - "$work" "$start" "$end" "$episodes" "$delay" <<'PY'
import json, sys
work, start, end, episodes, delay = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
util = [int(x) for x in open(work + "/util.txt").read().split() if x.isdigit()]
records = [json.loads(l) for l in open(work + "/run/trajectories.jsonl")]
turns = sum(r["outcome"]["turns"] for r in records)
judge = sum(r["timing"]["judge_s"] for r in records)
cpu = [l for l in open(work + "/run/generate.log") if l.startswith("end:")]
print("episodes %d, turns %d, wall %.1f s, teacher delay %.1f s" % (len(records), turns, end - start, delay))
print("GPU busy (nvidia-smi utilization > 0): %.0f%% of %d samples; mean utilization %.0f%%" % (
    100.0 * sum(u > 0 for u in util) / max(1, len(util)), len(util), sum(util) / max(1, len(util))))
print("judge time summed over episodes %.1f s (%.2f s per turn)" % (judge, judge / max(1, turns)))
print(cpu[-1].strip() if cpu else "no end line in generate.log")
PY
