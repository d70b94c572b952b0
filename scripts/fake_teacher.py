#!/usr/bin/env python3
"""A stand-in teacher for benchmarks: an OpenAI-compatible /v1/chat/completions server on 127.0.0.1
that answers every request after a fixed delay with the solution of a cassette's first line whose tag
names the request's task (from the prompt's "## Task `ID`" line), or with a fixed reply file.
  usage: scripts/fake_teacher.py --port P --delay 2.0 --cassette FILE"""
import argparse
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--delay", type=float, default=2.0)
ap.add_argument("--cassette", required=True)
args = ap.parse_args()

replies = {}
for line in open(args.cassette):
    entry = json.loads(line)
    task = entry["tag"].rsplit(" turn ", 1)[0]
    replies.setdefault(task, entry["response"]["message"]["content"])
lock = threading.Lock()
served = [0]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        body = json.dumps({"data": [{"id": "fake-teacher"}]}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers["content-length"])))
        text = " ".join(m.get("content") or "" for m in request["messages"] if m["role"] == "user")
        match = re.search(r"## Task `([^`]+)`", text)
        content = replies.get(match.group(1) if match else "", next(iter(replies.values())))
        time.sleep(args.delay)
        with lock:
            served[0] += 1
        body = json.dumps({"id": "c", "object": "chat.completion", "model": "fake-teacher",
                           "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                        "finish_reason": "stop"}],
                           "usage": {"prompt_tokens": 2000, "completion_tokens": 600}}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()
