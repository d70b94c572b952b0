#!/usr/bin/env bash
# Measures a fine-tuned student with the loop that made its data (docs/finetune.md, "The student").
#   scripts/eval-student.sh CHECKPOINT TASKS_ROOT OUT [BASELINE_RUN]
#       serves CHECKPOINT behind an OpenAI-compatible server on 127.0.0.1, runs `kforge generate` on
#       TASKS_ROOT against it (compile-only, 2 turns, 1 sample per task) into OUT/run, then
#       `kforge report OUT/run` (with --baseline BASELINE_RUN when given), and stops the server.
#   scripts/eval-student.sh --check CHECKPOINT
#       serves CHECKPOINT, asks it one chat completion, prints the reply's JSON, stops the server.
# The server is vLLM when the Python has it, else `transformers serve` (scripts/setup.sh --finetune installs
# it); nothing is downloaded (HF_HUB_OFFLINE=1).
# Environment: KFORGE_PYTHON (the server's Python; default the kforge venv, else python3),
# KFORGE_STUDENT_SERVER (vllm or transformers), KFORGE_STUDENT_PORT (default: a free port),
# KFORGE (the kforge binary; default build/kforge), KFORGE_STUDENT_WAIT (seconds to wait for the
# server; default 300), KFORGE_STUDENT_TURNS (default 2) and KFORGE_STUDENT_MAX_TOKENS (per reply,
# default 4096).
set -euo pipefail
here=$(pwd)
repo=$(cd "$(dirname "$0")/.." && pwd)

say() { echo "eval-student: $*" >&2; }
usage() { sed -n '3,8p' "$0" >&2; exit 2; }

check=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi
[ $# -ge 1 ] || usage
checkpoint=$1
if [ $check = 0 ]; then
  [ $# -ge 3 ] && [ $# -le 4 ] || usage
  tasks=$2 out=$3 baseline=${4:-}
fi
# Paths are the caller's: relative ones are resolved against the folder it ran in.
absolute() { case $1 in /*) echo "$1" ;; *) echo "$here/$1" ;; esac; }
[ -f "$checkpoint/config.json" ] || { say "$checkpoint: not a model folder (no config.json)"; exit 2; }
checkpoint=$(cd "$checkpoint" && pwd)
if [ $check = 0 ]; then
  tasks=$(absolute "$tasks") out=$(absolute "$out")
  [ -n "$baseline" ] && baseline=$(absolute "$baseline")
fi

venv=${KFORGE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/kforge/venv}
python=${KFORGE_PYTHON:-}
if [ -z "$python" ]; then
  python=python3
  [ -x "$venv/bin/python3" ] && python=$venv/bin/python3
fi
kforge=${KFORGE:-$repo/build/kforge}
case $kforge in */*) kforge=$(absolute "$kforge") ;; esac
port=${KFORGE_STUDENT_PORT:-$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
base_url=http://127.0.0.1:$port/v1
model=$checkpoint  # both servers name the model after the folder they serve

server=${KFORGE_STUDENT_SERVER:-}
if [ -z "$server" ]; then
  server=transformers
  "$python" -c 'import vllm' >/dev/null 2>&1 && server=vllm
fi
export HF_HUB_OFFLINE=1
log=$(mktemp "${TMPDIR:-/tmp}/kforge-student-server.XXXXXX")
case $server in
  vllm)
    "$python" -m vllm.entrypoints.openai.api_server --model "$checkpoint" --host 127.0.0.1 --port "$port" \
      >"$log" 2>&1 &
    ;;
  transformers)
    "$python" -c 'import transformers, fastapi, uvicorn, openai' >/dev/null 2>&1 ||
      { say "$python lacks transformers serve: scripts/setup.sh --finetune (pip install -r scripts/requirements-finetune.txt)"; exit 2; }
    transformers_cli=$(dirname "$python")/transformers
    [ -x "$transformers_cli" ] || transformers_cli=transformers
    device=cpu
    nvidia-smi -L >/dev/null 2>&1 && device=auto
    "$transformers_cli" serve "$checkpoint" --host 127.0.0.1 --port "$port" --device "$device" >"$log" 2>&1 &
    ;;
  *) say "KFORGE_STUDENT_SERVER=$server: expected vllm or transformers"; exit 2 ;;
esac
server_pid=$!
stop() {
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  rm -f "$log"
}
trap stop EXIT

wait_s=${KFORGE_STUDENT_WAIT:-300}
if ! "$python" - "$base_url/models" "$wait_s" "$server_pid" <<'EOF'
import os, sys, time, urllib.request
url, wait_s, pid = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
deadline = time.time() + wait_s
while time.time() < deadline:
    try:
        os.kill(pid, 0)
    except OSError:
        sys.exit("the server exited")
    try:
        with urllib.request.urlopen(url, timeout=5) as reply:
            if reply.status == 200:
                sys.exit(0)
    except OSError:
        pass
    time.sleep(0.5)
sys.exit(f"no answer from {url} within {wait_s:.0f} s")
EOF
then
  say "$server server on port $port did not come up; its log:"
  tail -20 "$log" >&2
  exit 1
fi
say "$server serves $model at $base_url"

if [ $check = 1 ]; then
  "$python" - "$base_url/chat/completions" "$model" <<'EOF'
import json, sys, urllib.request
url, model = sys.argv[1], sys.argv[2]
body = {"model": model, "max_tokens": 16,
        "messages": [{"role": "user", "content": "Write a CUDA kernel for relu."}]}
request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
with urllib.request.urlopen(request, timeout=120) as reply:
    answer = json.load(reply)
print(json.dumps(answer))
if not answer.get("choices") or "message" not in answer["choices"][0]:
    sys.exit("the reply holds no choices[0].message")
EOF
  exit
fi

mkdir -p "$out"
export KFORGE_STUDENT_KEY=${KFORGE_STUDENT_KEY:-unused}
"$kforge" generate --tasks "$tasks" --teacher openai --base-url "$base_url" --model "$model" --out "$out/run" \
  --compile-only --max-turns "${KFORGE_STUDENT_TURNS:-2}" --samples 1 --max-tokens "${KFORGE_STUDENT_MAX_TOKENS:-4096}" \
  --api-key-env KFORGE_STUDENT_KEY
report=("$kforge" report "$out/run")
[ -n "$baseline" ] && report+=(--baseline "$baseline")
"${report[@]}" | tee "$out/report.txt"
