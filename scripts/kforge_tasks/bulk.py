"""Imports every problem of KernelBench level folders, one subprocess per problem."""

import concurrent.futures
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "export_reference.py"


def _limit(gb):
    def apply():
        limit = int(gb * (1 << 30))
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return apply


def _one(args, level, file):
    task_id = f"kernelbench/level{level}/{file.stem}"
    cmd = [sys.executable, str(SCRIPT), "kernelbench", str(file), "--out", args.out, "--id", task_id,
           "--level", str(level), "--seed", str(args.seed)]
    if args.device:
        cmd += ["--device", args.device]
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout,
                              preexec_fn=_limit(args.mem_limit_gb))
    except subprocess.TimeoutExpired:
        return level, task_id, False, f"timed out after {args.timeout} s", time.monotonic() - start
    elapsed = time.monotonic() - start
    if proc.returncode == 0:
        return level, task_id, True, "", elapsed
    lines = [l for l in proc.stderr.splitlines() if l.startswith("FAIL ")]
    if lines:
        reason = lines[-1].split(": ", 1)[-1]
    else:
        tail = [l for l in proc.stderr.strip().splitlines() if l.strip()]
        reason = f"exit {proc.returncode}: " + (tail[-1][:300] if tail else "no output")
    return level, task_id, False, reason, elapsed


def _key(path):
    m = re.match(r"(\d+)", path.name)
    return (int(m.group(1)) if m else 1 << 30, path.name)


def run(args):
    start = time.monotonic()
    levels = [int(l) for l in args.levels.split(",") if l.strip()]
    jobs = []
    for level in levels:
        folder = Path(args.dir) / f"level{level}"
        files = sorted(folder.glob("*.py"), key=_key)
        if args.only:
            files = [f for f in files if re.search(args.only, f.name)]
        jobs += [(level, f) for f in files]
    counts = {level: [0, 0] for level in levels}
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        futures = [pool.submit(_one, args, level, f) for level, f in jobs]
        for fut in concurrent.futures.as_completed(futures):
            level, task_id, ok, reason, elapsed = fut.result()
            counts[level][0 if ok else 1] += 1
            if ok:
                print(f"ok   {task_id} ({elapsed:.1f} s)", flush=True)
            else:
                print(f"FAIL {task_id}: {reason}", flush=True)
    for level in levels:
        ok, bad = counts[level]
        print(f"level{level}: {ok}/{ok + bad} imported, {bad} failed")
    print(f"total: {sum(c[0] for c in counts.values())}/{len(jobs)} imported in {time.monotonic() - start:.0f} s")
    return 0 if all(c[1] == 0 for c in counts.values()) else 1
