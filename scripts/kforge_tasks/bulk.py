"""Imports every problem of KernelBench level folders.

Each job owns a worker subprocess (`export_reference.py _worker`) that imports torch once and
exports problems sent on stdin, one JSON result line each. A crash, an out-of-memory kill or a
timeout costs that problem only: the worker is replaced and the batch goes on. Workers are also
replaced every RECYCLE problems so leaks cannot build up, and share the CPU cores between them
(torch's default of one thread per core in every worker stalls them all).

A problem refused for memory under --mem-limit-gb (MemoryError, torch's "can't allocate memory",
or a worker killed by SIGKILL, the kernel's out-of-memory signal) is retried once after the
others, alone, with RETRY_FACTOR times the limit, capped to the memory available then less
MEMORY_MARGIN_GB. Other failures are final.
"""

import concurrent.futures
import json
import os
import re
import resource
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from .schema import TaskError, UsageError, check_id, make_root

SCRIPT = Path(__file__).resolve().parent.parent / "export_reference.py"
RECYCLE = 20
RETRY_FACTOR = 4
MEMORY_MARGIN_GB = 2
_MEMORY_REFUSED = re.compile(r"MemoryError|can't allocate memory|not enough memory|Cannot allocate memory|bad_alloc")


def _limit(gb):
    # RLIMIT_DATA (heap and private writable mappings), not RLIMIT_AS: the CUDA driver reserves
    # far more address space than any limit on memory would allow, and fails to start under one.
    def apply():
        limit = int(gb * (1 << 30))
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    return apply


def _cores():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _available_gb():
    """MemAvailable of /proc/meminfo in GB (GiB), or None where there is none."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / (1 << 20)
    except (OSError, ValueError, IndexError):
        pass
    return None


def retry_limit_gb(limit_gb, available_gb):
    """The memory limit of a retry: RETRY_FACTOR times the limit, within the memory available."""
    larger = limit_gb * RETRY_FACTOR
    return larger if available_gb is None else min(larger, available_gb - MEMORY_MARGIN_GB)


class _Worker:
    def __init__(self, args, mem_limit_gb, threads):
        self.args, self.mem_limit_gb, self.threads = args, mem_limit_gb, threads
        self.proc, self.done = None, 0

    def _start(self):
        cmd = [sys.executable, str(SCRIPT), "_worker", "--out", self.args.out, "--seed", str(self.args.seed),
               "--threads", str(self.threads)]
        if self.args.device:
            cmd += ["--device", self.args.device]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, preexec_fn=_limit(self.mem_limit_gb))
        self.done = 0

    def stop(self):
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def run(self, level, file, task_id):
        """(ok, reason, refused for memory, {flag: note} for an unjudgeable task: ill-conditioned,
        degenerate, nondeterministic)"""
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
                return False, f"timed out after {self.args.timeout} s", False, {}
            ready, _, _ = select.select([self.proc.stdout], [], [], min(left, 5))
            if ready:
                line = self.proc.stdout.readline()
                if not line:
                    code = self.proc.wait()
                    self.proc = None
                    if code == -signal.SIGKILL:
                        return False, "worker died: killed (out of memory?)", True, {}
                    why = f"killed by signal {-code}" if code < 0 else f"exit {code}"
                    return False, f"worker died: {why}", False, {}
                result = json.loads(line)
                reason = result.get("reason", "")
                refused = not result["ok"] and bool(_MEMORY_REFUSED.search(reason))
                return result["ok"], reason, refused, result.get("flags", {})


def worker_main(args):
    """Loop of the worker process: one JSON request per stdin line, one JSON result per stdout line."""
    from . import conditioning, exporter  # noqa: F401  (import torch before the first request)
    from .problem import import_one
    import torch
    if args.threads:
        torch.set_num_threads(args.threads)
    for line in sys.stdin:
        req = json.loads(line)
        ns = type("Args", (), dict(vars(args), file=req["file"], id=req["id"], level=req["level"],
                                   command="kernelbench", verbose=False))
        try:
            _, doc, _ = import_one(ns, req["level"])
            result = {"ok": True, "flags": _flags(doc)}
        except Exception as e:  # one problem never ends the batch
            text = str(e).strip().splitlines()
            msg = text[0][:300] if text else ""
            result = {"ok": False, "reason": msg if isinstance(e, TaskError) else f"{type(e).__name__}: {msg}"}
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()


def _flags(doc):
    """{flag: one-line note} of what makes an imported task unjudgeable."""
    from . import behaviour, conditioning
    flags = {}
    ill = conditioning.note(doc.get("conditioning"))
    if ill:
        flags["ill-conditioned"] = ill
    b = doc.get("behaviour")
    for note in behaviour.notes(b, []):
        flags[note.split(":", 1)[0]] = note
    return flags


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
    flagged = {level: {} for level in levels}  # imported, but unjudgeable: {flag: count}
    retried = {level: 0 for level in levels}
    refused = []  # (level, file, task_id): over the memory limit, to retry alone at the end
    cores = _cores()
    threads = max(1, cores // max(1, args.jobs))
    local = threading.local()
    workers = []
    lock = threading.Lock()

    def one(level, file):
        if not hasattr(local, "worker"):
            local.worker = _Worker(args, args.mem_limit_gb, threads)
            with lock:
                workers.append(local.worker)
        task_id = f"kernelbench/level{level}/{file.stem}"
        t0 = time.monotonic()
        try:
            check_id(task_id, "file name")
        except TaskError as e:  # e.g. level1/..py: never a folder outside the level
            return level, file, task_id, False, str(e), False, {}, time.monotonic() - t0
        ok, reason, memory, flags = local.worker.run(level, file, task_id)
        return level, file, task_id, ok, reason, memory, flags, time.monotonic() - t0

    def report_note(level, task_id, flags):
        for flag, note in (flags or {}).items():
            flagged[level][flag] = flagged[level].get(flag, 0) + 1
            print(f"note {task_id}: {note}", flush=True)

    try:
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
            futures = [pool.submit(one, level, f) for level, f in jobs]
            for fut in concurrent.futures.as_completed(futures):
                level, file, task_id, ok, reason, memory, note, elapsed = fut.result()
                if memory:
                    refused.append((level, file, task_id))
                    print(f"retry {task_id}: {reason} (over the {args.mem_limit_gb:g} GB limit; "
                          "retried alone after the others)", flush=True)
                    continue
                counts[level][0 if ok else 1] += 1
                print(f"ok   {task_id} ({elapsed:.1f} s)" if ok else f"FAIL {task_id}: {reason}", flush=True)
                report_note(level, task_id, note)
    finally:
        for w in workers:
            w.stop()
    for level, file, task_id in sorted(refused, key=lambda r: (r[0], _key(r[1]))):
        retried[level] += 1
        available = _available_gb()
        limit = retry_limit_gb(args.mem_limit_gb, available)
        if limit <= args.mem_limit_gb:
            counts[level][1] += 1
            print(f"FAIL {task_id}: over the {args.mem_limit_gb:g} GB memory limit, not retried: "
                  f"{available:.0f} GB of memory available", flush=True)
            continue
        worker = _Worker(args, limit, cores)
        t0 = time.monotonic()
        try:
            ok, reason, _, note = worker.run(level, file, task_id)
        finally:
            worker.stop()
        counts[level][0 if ok else 1] += 1
        how = f"retried alone with a {limit:.0f} GB memory limit"
        print(f"ok   {task_id} ({time.monotonic() - t0:.1f} s, {how})" if ok else f"FAIL {task_id}: {reason} ({how})",
              flush=True)
        report_note(level, task_id, note)
    for level in levels:
        ok, bad = counts[level]
        more = f" ({retried[level]} retried alone with more memory)" if retried[level] else ""
        flags = "".join(f", {n} {flag}" for flag, n in sorted(flagged[level].items()))
        print(f"level{level}: {ok}/{ok + bad} imported, {bad} failed{flags}{more}")
    print(f"total: {sum(c[0] for c in counts.values())}/{len(jobs)} imported in {time.monotonic() - start:.0f} s")
    return 0 if all(c[1] == 0 for c in counts.values()) else 1
