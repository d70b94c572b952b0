"""Imports every problem of KernelBench level folders.

Each job owns a worker subprocess (`export_reference.py _worker`) that imports torch once and
exports problems sent on stdin, one JSON result line each. A crash, an out-of-memory kill or a
timeout costs that problem only: the worker is replaced and the batch goes on. Workers are also
replaced every RECYCLE problems so leaks cannot build up.
"""

import concurrent.futures
import json
import os
import re
import resource
import select
import subprocess
import sys
import threading
import time
from pathlib import Path

from .schema import TaskError, UsageError, check_id, make_root

SCRIPT = Path(__file__).resolve().parent.parent / "export_reference.py"
RECYCLE = 20


def _limit(gb):
    # RLIMIT_DATA (heap and private writable mappings), not RLIMIT_AS: the CUDA driver reserves
    # far more address space than any limit on memory would allow, and fails to start under one.
    def apply():
        limit = int(gb * (1 << 30))
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    return apply


class _Worker:
    def __init__(self, args):
        self.args, self.proc, self.done = args, None, 0

    def _start(self):
        cmd = [sys.executable, str(SCRIPT), "_worker", "--out", self.args.out, "--seed", str(self.args.seed)]
        if self.args.device:
            cmd += ["--device", self.args.device]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, preexec_fn=_limit(self.args.mem_limit_gb))
        self.done = 0

    def stop(self):
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def run(self, level, file, task_id):
        if self.proc is None or self.done >= RECYCLE:
            self.stop()
            self._start()
        self.done += 1
        self.proc.stdin.write(json.dumps({"file": str(file), "id": task_id, "level": level}) + "\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + self.args.timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.stop()
                return False, f"timed out after {self.args.timeout} s"
            ready, _, _ = select.select([self.proc.stdout], [], [], min(left, 5))
            if ready:
                line = self.proc.stdout.readline()
                if not line:
                    code = self.proc.wait()
                    self.proc = None
                    why = "killed (out of memory?)" if code < 0 else f"exit {code}"
                    return False, f"worker died: {why}"
                result = json.loads(line)
                return result["ok"], result.get("reason", "")


def worker_main(args):
    """Loop of the worker process: one JSON request per stdin line, one JSON result per stdout line."""
    from . import exporter  # noqa: F401  (import torch before the first request)
    import export_reference
    for line in sys.stdin:
        req = json.loads(line)
        ns = type("Args", (), dict(vars(args), file=req["file"], id=req["id"], level=req["level"],
                                   command="kernelbench", verbose=False))
        try:
            export_reference._import_one(ns, req["level"])
            result = {"ok": True}
        except Exception as e:  # one problem never ends the batch
            text = str(e).strip().splitlines()
            msg = text[0][:300] if text else ""
            result = {"ok": False, "reason": msg if isinstance(e, TaskError) else f"{type(e).__name__}: {msg}"}
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()


def _key(path):
    m = re.match(r"(\d+)", path.name)
    return (int(m.group(1)) if m else 1 << 30, path.name)


def _levels(text):
    try:
        levels = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        levels = []
    if not levels or any(level < 0 for level in levels):
        raise UsageError(f"--levels '{text[:40]}': expected level numbers separated by commas, e.g. 1,2,3")
    return sorted(set(levels))


def _jobs(args, levels):
    root = Path(args.dir)
    if not root.is_dir():
        raise UsageError(f"{args.dir}: not a folder")
    present = [level for level in levels if (root / f"level{level}").is_dir()]
    if not present:
        raise UsageError(f"{args.dir}: no {', '.join(f'level{l}/' for l in levels)} folder in it")
    try:
        only = re.compile(args.only) if args.only else None
    except re.error as e:
        raise UsageError(f"--only: {e}") from None
    jobs = []
    for level in levels:
        files = sorted((root / f"level{level}").glob("*.py"), key=_key)
        jobs += [(level, f) for f in files if f.is_file() and (only is None or only.search(f.name))]
    if not jobs:
        raise UsageError(f"{args.dir}: no problem files (*.py) in {', '.join(f'level{l}/' for l in present)}")
    return jobs


def run(args):
    start = time.monotonic()
    levels = _levels(args.levels)
    jobs = _jobs(args, levels)
    make_root(args.out)
    counts = {level: [0, 0] for level in levels}
    local = threading.local()
    workers = []
    lock = threading.Lock()

    def one(level, file):
        if not hasattr(local, "worker"):
            local.worker = _Worker(args)
            with lock:
                workers.append(local.worker)
        task_id = f"kernelbench/level{level}/{file.stem}"
        t0 = time.monotonic()
        try:
            check_id(task_id, "file name")
        except TaskError as e:  # e.g. level1/..py: never a folder outside the level
            return level, task_id, False, str(e), time.monotonic() - t0
        ok, reason = local.worker.run(level, file, task_id)
        return level, task_id, ok, reason, time.monotonic() - t0

    try:
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
            futures = [pool.submit(one, level, f) for level, f in jobs]
            for fut in concurrent.futures.as_completed(futures):
                level, task_id, ok, reason, elapsed = fut.result()
                counts[level][0 if ok else 1] += 1
                print(f"ok   {task_id} ({elapsed:.1f} s)" if ok else f"FAIL {task_id}: {reason}", flush=True)
    finally:
        for w in workers:
            w.stop()
    for level in levels:
        ok, bad = counts[level]
        print(f"level{level}: {ok}/{ok + bad} imported, {bad} failed")
    print(f"total: {sum(c[0] for c in counts.values())}/{len(jobs)} imported in {time.monotonic() - start:.0f} s")
    return 0 if all(c[1] == 0 for c in counts.values()) else 1
