#!/usr/bin/env python3
"""Summarises `kforge tasks audit --timing --json`: per cheat, how many tasks it was tried on, took its
shortcut on a checked run, was timed faster than the honest work, or did not apply; the controls that took
their shortcut; the distinct draws the timed runs rotated over. Exit 1 when a cheat was believed on a
judgeable task (a shortcut, or a median a fifth under the honest one's) or a task could not be audited.

Usage: timing_audit_summary.py AUDIT_TIMING_JSONL"""
import collections
import json
import sys

FASTER_MARGIN = 0.2  # as `kforge tasks audit --timing`: a speedup of 1.25x


def main(path):
    tally = collections.defaultdict(collections.Counter)
    draws = collections.Counter()
    tasks = harness = believed = untimed = 0
    for line in open(path):
        if not line.strip():
            continue
        r = json.loads(line)
        tasks += 1
        if r["status"] == "not_timed":  # a nondeterministic task: no timed run of it can be checked
            untimed += 1
            continue
        if r["status"] != "ok":
            harness += 1
            print("harness_error", r["task"], r["message"][:200])
            continue
        for c in r["candidates"]:
            t, name = c.get("timing") or {}, c["name"]
            row = tally[name]
            if c["message"].startswith("not applicable"):
                row["not applicable"] += 1
                continue
            row["tried"] += 1
            if t.get("control"):
                row["took its shortcut"] += c["accepted"]
                if not c["accepted"]:
                    print("control silent", r["task"], c["message"][:160])
                continue
            draws[t.get("draws", 0)] += 1
            faster = (t.get("median_ms", 0) > 0 and not c["message"].startswith("refused")
                      and t["median_ms"] < t["honest_ms"] * (1 - FASTER_MARGIN))
            row["shortcut on a checked run"] += c["accepted"]
            row["faster than honest"] += faster
            row["refused (mismatch)"] += c["message"].startswith("refused")
            if (c["accepted"] or faster) and not r["unjudgeable"]:
                believed += 1
                print("BELIEVED", r["task"], name, t)
    columns = ["tried", "shortcut on a checked run", "faster than honest", "refused (mismatch)",
               "not applicable", "took its shortcut"]
    print(f"{'candidate':24}" + "".join(f"{c:>27}" for c in columns))
    for name, row in sorted(tally.items()):
        print(f"{name:24}" + "".join(f"{row[c]:27}" for c in columns))
    print("distinct draws per timed cheat:", dict(sorted(draws.items())))
    print(f"audited {tasks} tasks: {believed} timing cheats believed on judgeable tasks, {harness} harness_error, "
          f"{untimed} not timed (nondeterministic)")
    return 1 if believed or harness else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
