#!/usr/bin/env python3
"""A stand-in for the Hugging Face Hub's API on 127.0.0.1, for `--push-to-hub` tests (no network).

  usage: fake_hub.py STORE      prints its port, then serves until killed

Answers what huggingface_hub's create_repo and upload_folder ask for: POST /api/repos/create,
/api/validate-yaml (the README's front matter must be a YAML mapping), /api/{type}s/{repo}/preupload/{rev}
(every file "regular": sent inline) and /api/{type}s/{repo}/commit/{rev} (NDJSON; files are written to
STORE/{type}s/{repo}/{path}). Requests without a bearer token are refused (401). It also serves what
`datasets.load_dataset("ORG/NAME")` reads: GET /api/datasets/{repo}[/revision/{rev}] (the files, with a
commit id made from their bytes), /api/datasets/{repo}/tree/{rev}[/{path}] and GET or HEAD
/datasets/{repo}/resolve/{rev}/{path} (the file, any revision). Each request is logged on stderr as
`METHOD PATH`.
"""

import base64
import hashlib
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import yaml

STORE = sys.argv[1]


def stored_files(root):
    """Every file of a stored repository, as repository paths, sorted."""
    return sorted(os.path.relpath(os.path.join(folder, f), root).replace(os.sep, "/")
                  for folder, _, files in os.walk(root) for f in files)


def revision(root):
    """A commit id for the repository's current files: the SHA-1 of their names and bytes."""
    digest = hashlib.sha1()
    for name in stored_files(root):
        digest.update(name.encode())
        with open(os.path.join(root, name), "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()


def tree(root, under, recursive):
    """The Hub's tree listing of `under` (a folder of the repository)."""
    entries = []
    for name in stored_files(root):
        if under and not name.startswith(under + "/"):
            continue
        rest = name[len(under) + 1:] if under else name
        if "/" in rest and not recursive:
            folder = (under + "/" if under else "") + rest.split("/")[0]
            if not any(e["path"] == folder for e in entries):
                entries.append({"type": "directory", "oid": "0" * 40, "size": 0, "path": folder})
            continue
        with open(os.path.join(root, name), "rb") as f:
            data = f.read()
        entries.append({"type": "file", "oid": hashlib.sha1(data).hexdigest(), "size": len(data), "path": name})
    return entries


class Hub(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, code, value, headers=None, body=True):
        data = json.dumps(value).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, header in (headers or {}).items():
            self.send_header(key, header)
        self.end_headers()
        if body:
            self.wfile.write(data)

    def do_GET(self):
        self.read(body=True)

    def do_HEAD(self):
        self.read(body=False)

    def read(self, body):
        """The read side, for `load_dataset("ORG/NAME")`: repository info, file listings and files."""
        path, _, query = self.path.partition("?")
        print(f"{self.command} {path}", file=sys.stderr, flush=True)
        parts = [p for p in path.split("/") if p]
        # /api/datasets/ORG/NAME[/revision/REV] and /api/datasets/ORG/NAME/tree/REV[/PATH]
        if len(parts) >= 4 and parts[0] == "api" and parts[1] in ("datasets", "models"):
            kind, repo, rest = parts[1], "/".join(parts[2:4]), parts[4:]
            root = os.path.join(STORE, kind, repo)
            if not os.path.isdir(root):
                return self.reply(404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"})
            if not rest or rest[0] == "revision":
                files = stored_files(root)
                return self.reply(200, {"id": repo, "sha": revision(root), "private": False, "disabled": False,
                                        "gated": False, "lastModified": "2026-01-01T00:00:00.000Z",
                                        "siblings": [{"rfilename": f} for f in files]}, body=body)
            if rest[0] == "tree" and len(rest) >= 2:
                under = "/".join(rest[2:])
                recursive = "recursive=true" in query.lower() or "recursive=True" in query
                return self.reply(200, tree(root, under, recursive), body=body)
        # /datasets/ORG/NAME/resolve/REV/PATH
        if len(parts) >= 6 and parts[0] in ("datasets",) and parts[3] == "resolve":
            root = os.path.join(STORE, parts[0], "/".join(parts[1:3]))
            name = os.path.join(root, *parts[5:])
            if not os.path.isfile(name):
                return self.reply(404, {"error": "Entry not found"}, {"X-Error-Code": "EntryNotFound",
                                                                      "X-Repo-Commit": revision(root)})
            with open(name, "rb") as f:
                data = f.read()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("X-Repo-Commit", revision(root))
            self.send_header("ETag", '"' + hashlib.sha1(data).hexdigest() + '"')
            self.end_headers()
            if body:
                self.wfile.write(data)
            return
        self.reply(404, {"error": f"not served here: {path}"})

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
