#!/usr/bin/env python3
"""A scripted student for `kforge skill eval` on a GPU: an OpenAI-compatible /v1/chat/completions
server on 127.0.0.1 that answers each task (from the prompt's "## Task `ID`" line) with a real kernel:
the cassette's last reply for that task (a verified solution), or the same kernel broken so that
the GPU check fails (every __global__ function returns at once in the grid's last block, so part of
the output is never written). Of the K requests per (arm, task), the first RIGHT[arm] get the working
kernel. The arm is read from the system prompt: "skill" when it holds --marker (a phrase of the
skill's body), "placebo" when it holds another "## Skill:" section, else "none".
  usage: scripts/skill_student.py --port P --cassette FILE --marker TEXT [--right none=1,placebo=1,skill=3]"""
import argparse
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--cassette", action="append", required=True)
ap.add_argument("--marker", required=True)
ap.add_argument("--right", default="none=1,placebo=1,skill=3")
args = ap.parse_args()

right = {k: int(v) for k, v in (pair.split("=") for pair in args.right.split(","))}
replies = {}
for path in args.cassette:
    for line in open(path):
        entry = json.loads(line)
        replies[entry["tag"].rsplit(" turn ", 1)[0]] = entry["response"]["message"]["content"]


def broken(reply):
    """The reply with every kernel cut short in the grid's last block."""
    return re.sub(r"(__global__[^{;]*\{)", r"\1 if (blockIdx.x == gridDim.x - 1) return;", reply)


lock = threading.Lock()
seen = {}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers["content-length"])))
        system = " ".join(m.get("content") or "" for m in request["messages"] if m["role"] == "system")
        user = " ".join(m.get("content") or "" for m in request["messages"] if m["role"] == "user")
        arm = "skill" if args.marker in system else "placebo" if "## Skill:" in system else "none"
        match = re.search(r"## Task `([^`]+)`", user)
        task = match.group(1) if match else ""
        with lock:
            n = seen.get((request["model"], arm, task), 0)
            seen[(request["model"], arm, task)] = n + 1
        reply = replies.get(task, "I cannot solve this task.")
        content = reply if n < right.get(arm, 0) else broken(reply)
        body = json.dumps({"id": "c", "object": "chat.completion", "model": request["model"],
                           "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                        "finish_reason": "stop"}],
                           "usage": {"prompt_tokens": 1000, "completion_tokens": 300}}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()
