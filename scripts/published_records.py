#!/usr/bin/env python3
"""Trajectory records (kforge.trajectory/1) for solutions judged by `kforge verify`, so that
`kforge export --format kernelbench` turns each into a KernelBench ModelNew file. One record per
solution, one attempt holding the solution and its verdict; samples count the solutions of a task from
0 in the order given, so two published kernels for one problem become two files.

  usage: published_records.py VERDICTS.jsonl OUT.jsonl SOLUTION.json...

VERDICTS.jsonl holds `kforge verify`'s lines for the same solutions in the same order (verify writes
one line per solution, in order). Prints, for each solution, the record id and the sample it got as
JSON lines on stdout: {"file", "task", "record", "sample", "status"}."""
import collections
import json
import sys


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    verdicts_path, out_path, files = argv[1], argv[2], argv[3:]
    with open(verdicts_path) as f:
        verdicts = [json.loads(line) for line in f if line.strip()]
    if len(verdicts) != len(files):
        sys.exit(f"published_records: {len(verdicts)} verdicts for {len(files)} solutions")
    samples = collections.Counter()
    with open(out_path, "w") as out:
        for path, verdict in zip(files, verdicts):
            with open(path) as f:
                solution = json.load(f)
            task = solution["task"]
            sample = samples[task]
            samples[task] += 1
            level = next((int(p[5:]) for p in task.split("/") if p.startswith("level") and p[5:].isdigit()), None)
            status = verdict["status"]
            correct = status == "ok"
            compiled = verdict.get("compile") is not None and status != "compile_error"
            record_id = f"published/{task}/{sample}"
            attempt = {"turn": 1, "tool_call_id": "", "status": status, "parse_error": "", "compiled": compiled,
                       "correct": correct, "speedup": None, "solution": solution, "verdict": verdict, "bench": None}
            record = {
                "schema": "kforge.trajectory/1", "id": record_id, "run_id": "published", "sample": sample,
                "task": {"id": task, "level": level, "tags": [], "view": "code", "source": "kernelbench",
                         "license": "MIT", "reference_hash": "", "reference_source": ""},
                "teacher": {"provider": "replay", "model": "published", "params": {}},
                "protocol": "text", "compile_only": False,
                "messages": [{"role": "assistant", "content": path}], "tools": [],
                "attempts": [attempt], "best": 0,
                "outcome": {"correct": correct, "speedup": None, "turns": 1,
                            "first_correct_turn": 1 if correct else None, "stop": "max_turns", "error": ""},
                "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0,
                          "reasoning_tokens": 0, "requests": 0, "cost_usd": 0, "cost_known": True},
                "timing": {"wall_s": 0, "llm_s": 0, "judge_s": 0},
                "device": verdict.get("device"), "kforge_version": verdict.get("toolchain", {}).get("kforge", ""),
                "created_at": "1970-01-01T00:00:00Z"}
            out.write(json.dumps(record) + "\n")
            print(json.dumps({"file": path, "task": task, "record": record_id, "sample": sample, "status": status}))


if __name__ == "__main__":
    main(sys.argv)
