#!/usr/bin/env bash
# The main job on its built-in default: `kforge generate` on tasks/demo with the bundled replay
# teacher (examples/teacher/demo.jsonl: a broken kernel, the fix after the compile error, a faster
# one). On a machine with a GPU every candidate runs against the LibTorch reference and is timed;
# without one, generate says so and gives compile-only feedback. The run folder is build/demo-run.
set -euo pipefail
cd "$(dirname "$0")/.."
kforge=${KFORGE:-build/kforge}
tasks=tasks
if nvidia-smi -L >/dev/null 2>&1; then
  [ -e build/tasks/demo/relu/ref.default.cuda.pt2 ] || "$kforge" tasks build tasks/demo --out build/tasks --device cuda >&2
  tasks=build/tasks
fi
run=${KFORGE_DEMO_RUN:-build/demo-run}
rm -rf "$run"  # a build artefact: each demo starts afresh
"$kforge" generate --tasks "$tasks" --filter 'demo/*' --teacher replay:examples/teacher/demo.jsonl \
  --model replay-demo --max-turns 3 --out "$run"
echo "demo: trajectories in $run/trajectories.jsonl" >&2
