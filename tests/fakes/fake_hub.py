#!/usr/bin/env python3
"""A stand-in for the Hugging Face Hub's API on 127.0.0.1, for `--push-to-hub` tests (no network).

  usage: fake_hub.py STORE      prints its port, then serves until killed

Answers what huggingface_hub's create_repo and upload_folder ask for: POST /api/repos/create,
/api/validate-yaml (the README's front matter must be a YAML mapping), /api/{type}s/{repo}/preupload/{rev}
(every file "regular": sent inline) and /api/{type}s/{repo}/commit/{rev} (NDJSON; files are written to
STORE/{type}s/{repo}/{path}). Requests without a bearer token are refused (401). Each request is logged
on stderr as `METHOD PATH`.
"""

import base64
import hashlib
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import yaml

STORE = sys.argv[1]


class Hub(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, code, value):
        body = json.dumps(value).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.reply(404, {"error": f"not served here: {self.path}"})

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        path = self.path.split("?")[0]
        print(f"POST {path}", file=sys.stderr, flush=True)
        if not self.headers.get("Authorization", "").startswith("Bearer "):
            return self.reply(401, {"error": "no token"})
        host = f"http://{self.headers['Host']}"
        if path == "/api/repos/create":
            request = json.loads(body)
            name = (request["organization"] + "/" if request.get("organization") else "") + request["name"]
            kind = request.get("type") or "model"
            return self.reply(200, {"url": f"{host}/{'' if kind == 'model' else kind + 's/'}{name}", "name": name})
        if path == "/api/validate-yaml":
            content = json.loads(body)["content"]
            if not content.startswith("---\n") or "\n---\n" not in content:
                return self.reply(400, {"error": "no YAML front matter"})
            try:
                front = yaml.safe_load(content[4:content.index("\n---\n")])
            except yaml.YAMLError as e:
                return self.reply(400, {"error": f"invalid YAML: {e}"})
            if not isinstance(front, dict) or not isinstance(front.get("license", ""), (str, list)):
                return self.reply(400, {"error": "the front matter is not a mapping with a license"})
            return self.reply(200, {"errors": [], "warnings": []})
        parts = path.split("/")
        if len(parts) > 5 and parts[-2] == "preupload":
            files = json.loads(body)["files"]
            return self.reply(200, {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False}
                                              for f in files]})
        if len(parts) > 5 and parts[-2] == "commit":
            repo = "/".join(parts[2:-2])
            for line in body.decode().splitlines():
                item = json.loads(line)
                if item["key"] == "file":
                    dest = os.path.join(STORE, repo, item["value"]["path"])
                    os.makedirs(os.path.dirname(dest), exist_ok=True)
                    with open(dest, "wb") as f:
                        f.write(base64.b64decode(item["value"]["content"]))
            oid = hashlib.sha1(body).hexdigest()
            return self.reply(200, {"commitUrl": f"{host}/{repo}/commit/{oid}", "commitOid": oid})
        return self.reply(404, {"error": f"not served here: {path}"})


server = ThreadingHTTPServer(("127.0.0.1", 0), Hub)
print(server.server_address[1], flush=True)
server.serve_forever()
