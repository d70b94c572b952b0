#!/usr/bin/env bash
# The main job on its built-in default: verify the bundled demo solutions against tasks/demo.
# On a machine with a GPU the candidates run against the LibTorch reference; without one, kforge
# still compiles them and checks their launch plans (--compile-only).
set -euo pipefail
cd "$(dirname "$0")/.."
kforge=${KFORGE:-build/kforge}
if nvidia-smi -L >/dev/null 2>&1; then
  [ -e build/tasks/demo/relu/ref.default.cuda.pt2 ] || "$kforge" tasks build tasks/demo --out build/tasks --device cuda >&2
  exec "$kforge" verify --tasks build/tasks examples/demo/*.json
fi
echo "demo: no GPU here, so compile and plan checks only (--compile-only)" >&2
exec "$kforge" verify --compile-only --tasks tasks examples/demo/*.json
