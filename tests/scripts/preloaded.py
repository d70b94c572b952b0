"""Runs a Python script as `python SCRIPT ARGS...` would, in a child forked from a server process that
imported the script's modules (torch, torch.export) once: each run then starts in a fraction of a
second instead of the ~3 s of those imports.

The child gets the caller's working folder and environment, stdin from /dev/null, its own stdout and
stderr, `__name__ == "__main__"`, and the interpreter's exit status (an uncaught exception prints its
traceback and exits 1; SystemExit's code as Python maps it). The server never runs a torch operation,
so no thread pool exists to be lost in the fork.
"""

import atexit
import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

# The server: reads one JSON request a line, forks a child to run it, answers with its exit status.
SERVER = r'''
import atexit, importlib, json, os, runpy, sys, threading, traceback
script, modules = sys.argv[1], json.loads(sys.argv[2])
sys.path[0] = os.path.dirname(script)
for name in modules:
    importlib.import_module(name)
requests, answers = os.fdopen(0, "r"), os.fdopen(1, "w")
for line in requests:
    request = json.loads(line)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, request["stdout"], os.O_WRONLY),
                                (2, request["stderr"], os.O_WRONLY)):
            os.dup2(os.open(path, flags), fd)
        sys.argv = [script, *request["args"]]
        code = 0
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as e:
            if e.code is None:
                code = 0
            elif isinstance(e.code, int):
                code = e.code & 0xFF
            else:
                print(e.code, file=sys.stderr)
                code = 1
        except BaseException:
            traceback.print_exc()
            code = 1
        threading._shutdown()
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    answers.write(f"{os.waitstatus_to_exitcode(status)}\n")
    answers.flush()
'''


class PreloadedScript:
    """`run(*args)` runs SCRIPT with ARGS; the server starts on the first run and ends with the caller."""

    def __init__(self, script, modules):
        self.script, self.modules = str(script), list(modules)
        self.server = None
        self.lock = threading.Lock()

    def run(self, *args):
        with self.lock, tempfile.TemporaryDirectory() as tmp:
            if self.server is None:
                self.server = subprocess.Popen([sys.executable, "-c", SERVER, self.script, json.dumps(self.modules)],
                                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                atexit.register(self.close)
            out, err = Path(tmp) / "stdout", Path(tmp) / "stderr"
            out.touch()
            err.touch()
            request = {"args": [str(a) for a in args], "cwd": os.getcwd(), "env": dict(os.environ),
                       "stdout": str(out), "stderr": str(err)}
            self.server.stdin.write(json.dumps(request) + "\n")
            self.server.stdin.flush()
            answer = self.server.stdout.readline()
            if not answer:
                raise RuntimeError(f"the server running {self.script} ended (exit {self.server.wait()})")
            with open(out) as o, open(err) as e:
                return subprocess.CompletedProcess([sys.executable, self.script, *args], int(answer), o.read(), e.read())

    def close(self):
        """Ends the server (it exits when its requests end)."""
        if self.server is not None:
            self.server.stdin.close()
            self.server.wait()
            self.server = None


REPO = Path(__file__).resolve().parents[2]

# scripts/export_reference.py, with what every command of it imports.
EXPORT_REFERENCE = PreloadedScript(REPO / "scripts" / "export_reference.py",
                                   ["torch", "kforge_tasks.problem", "kforge_tasks.exporter", "kforge_tasks.bulk"])
