#!/usr/bin/env python3
"""One line per trajectory record (kforge.trajectory/1): task, how the episode ended, each attempt's
status and speedup, tokens and where the time went.
  usage: scripts/trajectory_summary.py RUN_DIR/trajectories.jsonl"""
import json
import sys


def main(path):
    n = 0
    for line in open(path):
        if not line.strip():
            continue
        r = json.loads(line)
        n += 1
        attempts = []
        for a in r["attempts"]:
            s = "%d:%s" % (a["turn"], a["status"])
            if a.get("speedup") is not None:
                s += "@%.2fx" % a["speedup"]
            attempts.append(s)
        o, t, u = r["outcome"], r["timing"], r["usage"]
        print("%-48s %-14s best=%s correct=%s speedup=%s [%s] tokens=%d llm=%.2fs judge=%.2fs wall=%.2fs" % (
            r["task"]["id"], o["stop"], r["best"], o["correct"],
            "%.2fx" % o["speedup"] if o["speedup"] is not None else "-", " ".join(attempts),
            u["input_tokens"] + u["output_tokens"], t["llm_s"], t["judge_s"], t["wall_s"]))
    if n == 0:
        sys.exit("no trajectories in " + path)


if __name__ == "__main__":
    main(sys.argv[1])
