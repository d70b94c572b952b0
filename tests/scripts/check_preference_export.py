"""`kforge export --format preference` and `--format turns` as the Hugging Face libraries read them (run
by ctest as export_preference): the pairing rules on records made here (correct over incorrect, faster
over slower only when the speedup intervals are apart, never a chosen side with suspect timing, only
attempts that saw the same prompt), the rows loading with `datasets.load_dataset(FOLDER)`, per-attempt
rows with their verdicts and absolute times, and TRL's DPOTrainer taking a few steps on the pairs with a
tiny model made here (offline), its loss printed step by step.

  KFORGE_BIN=build/kforge python -m pytest -q -s tests/scripts/check_preference_export.py
"""

import copy
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import datasets
import pytest
import torch
import trl
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_trl_export import LAUNCHES, RELU, TOOLS, tiny_model, tokenizer_for  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
KFORGE = os.environ.get("KFORGE_BIN", str(REPO / "build" / "kforge"))
GPU = {"index": 0, "name": "NVIDIA H200", "cc": "9.0"}


def bench(speedup, lo, hi, flags=(), kernel_ms=None, torch_compile_ms=None):
    """A kforge.bench/1 record of a correct attempt, as a trajectory keeps it (no samples); with
    torch_compile_ms, the torch.compile baseline that generate --torch-compile keeps on it."""
    kernel_ms = kernel_ms or 1.0 / speedup
    compiled = {} if torch_compile_ms is None else {"torch_compile": {
        "median_ms": torch_compile_ms, "eager_median_ms": 1.0, "compile_s": 20.0, "took_s": 25.0, "samples": 10,
        "mode": "default", "torch": "2.11.0", "gpu": GPU["name"]}}

    def subject(ms):
        return {"count": 20, "median_ms": ms, "p10_ms": ms, "p90_ms": ms, "mean_ms": ms, "min_ms": ms, "max_ms": ms,
                "noise": 0.01, "median_ci_ms": [ms, ms], "throttled": 0, "batch": 1}
    return {"schema": "kforge.bench/1", "task": "t", "solution_hash": "h", "status": "ok", "message": "",
            "mode": "cold", "seed": 1, "converged": True, "rounds": 3, "wall_seconds": 1.0, "sm_clock_mhz": 1980,
            "max_sm_clock_mhz": 1980, "candidate": subject(kernel_ms), "reference": subject(1.0),
            "speedup": {"ratio": speedup, "ci": [lo, hi], "confidence": 0.95, "iterations": 1000},
            "roofline": None, "flags": list(flags), "device": GPU, **compiled}


def attempt(turn, tag, status, timing=None, protocol="text"):
    correct = status == "ok"
    solution = {"schema": "kforge.solution/1", "task": "t", "source": RELU + f"__device__ int tag_{tag};\n",
                "launches": LAUNCHES,
                "scratch": [], "options": []}
    return {"turn": turn, "tool_call_id": f"call_{tag}" if protocol == "tools" else "", "status": status,
            "parse_error": "", "compiled": status != "compile_error", "correct": correct,
            "speedup": timing["speedup"]["ratio"] if timing else None, "solution": solution,
            "verdict": {"schema": "kforge.verdict/1", "task": "t", "status": status, "judge": 2}, "bench": timing}


def episode(task, sample, attempts, protocol="text"):
    """A record whose assistant turns hand in `attempts` in order, with feedback between them."""
    messages = [{"role": "system", "content": "You write CUDA kernels."},
                {"role": "user", "content": f"Write a kernel for {task}."}]
    for a in attempts:
        source = a["solution"]["source"]
        if protocol == "tools":
            messages.append({"role": "assistant", "content": "",
                             "tool_calls": [{"id": a["tool_call_id"], "name": "run",
                                             "arguments": {"source": source, "launches": LAUNCHES}}]})
            messages.append({"role": "tool", "tool_call_id": a["tool_call_id"], "content": a["status"]})
        else:
            messages.append({"role": "assistant",
                             "content": f"```cuda\n{source}```\n```json\n{json.dumps({'launches': LAUNCHES})}\n```\n"})
            messages.append({"role": "user", "content": f"{a['status']}: try again"})
    if protocol == "text":
        messages.pop()  # the text protocol ends with the teacher's last reply
    correct = [i for i, a in enumerate(attempts) if a["correct"]]
    best = max(correct, key=lambda i: attempts[i]["speedup"] or 0) if correct else len(attempts) - 1
    return {"schema": "kforge.trajectory/1", "id": f"run1/{task}/{sample}", "run_id": "run1", "sample": sample,
            "task": {"id": task, "level": 1, "tags": ["elementwise"], "view": "code", "source": "kernelbench",
                     "license": "MIT", "reference_hash": "", "reference_source": "import torch\n"},
            "teacher": {"provider": "replay", "model": "teacher-1", "params": {}},
            "protocol": protocol, "compile_only": False, "messages": messages,
            "tools": TOOLS if protocol == "tools" else [], "attempts": attempts, "best": best,
            "outcome": {"stop": "max_turns", "error": ""}, "usage": {}, "timing": {"wall_s": 1.0}, "device": GPU,
            "kforge_version": "0.1.0", "created_at": "2026-01-01T00:00:00Z"}


A = "kernelbench/level1/19_ReLU"
B = "kernelbench/level1/22_Tanh"
C = "kernelbench/level1/21_Sigmoid"


def records():
    """Task A, one turn per sample: s0 wrong, s1 1.2x and s4 1.25x (intervals overlap), s2 2.0x (apart from
    both), s3 5.0x flagged faster_than_light. Task B: two samples whose second turns saw different
    histories (no pair), and one turn that is a harness error. Task C: the tools protocol, s0 wrong, s1 right."""
    yield episode(A, 0, [attempt(1, "a0", "mismatch")])
    yield episode(A, 1, [attempt(1, "a1", "ok", bench(1.2, 1.1, 1.3))])
    yield episode(A, 2, [attempt(1, "a2", "ok", bench(2.0, 1.9, 2.1, torch_compile_ms=0.8))])
    yield episode(A, 3, [attempt(1, "a3", "ok", bench(5.0, 4.8, 5.2, ["faster_than_light"]))])
    yield episode(A, 4, [attempt(1, "a4", "ok", bench(1.25, 1.15, 1.35))])
    yield episode(B, 0, [attempt(1, "b0", "compile_error"), attempt(2, "b1", "ok", bench(1.5, 1.4, 1.6))])
    yield episode(B, 1, [attempt(1, "b2", "harness_error"), attempt(2, "b3", "mismatch")])
    yield episode(C, 0, [attempt(1, "c0", "compile_error", protocol="tools")], "tools")
    yield episode(C, 1, [attempt(1, "c1", "ok", bench(1.1, 1.0, 1.2), protocol="tools")], "tools")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    if not os.access(KFORGE, os.X_OK):
        pytest.fail(f"no kforge binary at {KFORGE}: build it, or set KFORGE_BIN")
    folder = tmp_path_factory.mktemp("run")
    with open(folder / "trajectories.jsonl", "w") as f:
        for r in records():
            f.write(json.dumps(r) + "\n")
    return folder


def export(run, out, *args):
    done = subprocess.run([KFORGE, "export", str(run), "--out", str(out), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done


def lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.fixture(scope="module")
def preference(run, tmp_path_factory):
    out = tmp_path_factory.mktemp("export") / "preference"
    export(run, out, "--format", "preference")
    return out


def test_pairs_follow_the_written_rules(preference):
    rows = lines(preference / "train.jsonl")
    pairs = {(r["chosen_id"].split("/")[-1] if r["task"] == A else r["chosen_id"], r["rejected_id"].split("/")[-1]
              if r["task"] == A else r["rejected_id"], r["rule"]) for r in rows}
    assert pairs == {
        ("1", "0", "correct_over_incorrect"), ("2", "0", "correct_over_incorrect"),
        ("4", "0", "correct_over_incorrect"),
        ("2", "1", "faster_over_slower"), ("2", "4", "faster_over_slower"),
        (f"run1/{C}/1", f"run1/{C}/0", "correct_over_incorrect")}, pairs
    assert len(rows) == 6
    stats = json.loads((preference / "stats.json").read_text())
    # A's s3 has suspect timing (never exported without --include-suspect-timing); B's s1 is unjudged (a
    # harness error, nothing correct); B's s0 is alone.
    assert stats["exported"] == 6 and stats["left_out"] == {"harness_error": 1, "no_pair": 1,
                                                             "suspect_timing": 1}, stats


def test_rows_hold_the_prompt_both_turns_and_what_they_measured(preference):
    rows = lines(preference / "train.jsonl")
    assert len({tuple(r) for r in rows}) == 1, "one set of columns, in one order"
    front = yaml.safe_load((preference / "README.md").read_text().split("---\n")[1])
    features = datasets.Features._from_yaml_list(front["dataset_info"]["features"])
    assert list(features) == list(rows[0])
    faster = next(r for r in rows if r["rule"] == "faster_over_slower" and r["rejected_id"].endswith("/1"))
    assert faster["prompt"] == [{"role": "system", "content": "You write CUDA kernels."},
                                {"role": "user", "content": f"Write a kernel for {A}."}]
    assert "tag_a2" in faster["chosen"][0]["content"] and "tag_a1" in faster["rejected"][0]["content"]
    assert faster["chosen"][0]["role"] == faster["rejected"][0]["role"] == "assistant"
    assert faster["chosen_speedup"] == 2.0 and faster["rejected_speedup"] == 1.2
    assert faster["chosen_kernel_ms"] == 0.5 and math.isclose(faster["rejected_kernel_ms"], 1 / 1.2)
    assert faster["reference_ms"] == 1.0 and faster["gpu"] == "NVIDIA H200" and faster["bench_mode"] == "cold"
    assert faster["judge_version"] == 2 and faster["tools"] is None
    tools = next(r for r in rows if r["task"] == C)
    assert tools["tools"] == TOOLS and tools["rejected_status"] == "compile_error"
    call = tools["chosen"][0]["tool_calls"][0]
    assert call["function"]["arguments"] == {"source": RELU + "__device__ int tag_c1;\n", "launches": LAUNCHES}
    assert not any("faster_than_light" in json.dumps(r) or r["chosen_id"].endswith(f"{A}/3") for r in rows)


def test_preference_loads_from_its_folder(preference, tmp_path):
    ds = datasets.load_dataset(str(preference), cache_dir=str(tmp_path / "cache"))
    assert ds["train"].num_rows == 6
    assert ds["train"].features["chosen"] == datasets.List(datasets.Json())
    written = {r["id"]: r for r in lines(preference / "train.jsonl")}
    for row in ds["train"]:
        assert row["chosen"] == written[row["id"]]["chosen"] and row["prompt"] == written[row["id"]]["prompt"]


def test_per_task_caps_the_pairs_best_first(run, tmp_path):
    out = tmp_path / "capped"
    export(run, out, "--format", "preference", "--per-task", "1")
    rows = lines(out / "train.jsonl")
    assert sorted((r["task"], r["chosen_id"], r["rule"]) for r in rows) == [
        (A, f"run1/{A}/2", "correct_over_incorrect"), (C, f"run1/{C}/1", "correct_over_incorrect")]


def test_turns_are_one_row_per_attempt_with_its_verdict_and_history(run, tmp_path):
    out = tmp_path / "turns"
    export(run, out, "--format", "turns", "--include-incorrect", "--include-suspect-timing")
    rows = lines(out / "train.jsonl")
    assert len(rows) == 9, len(rows)  # every attempt, but none of B's s1 (unjudged: a harness error)
    suspect = next(r for r in rows if r["id"] == f"run1/{A}/3")
    assert suspect["speedup"] is None, "a timing refused as faster than light has no speedup"
    b = [r for r in rows if r["id"] == f"run1/{B}/0"]
    assert [(r["turn"], r["status"], r["correct"], r["speedup"]) for r in b] == [
        (1, "compile_error", False, None), (2, "ok", True, 1.5)]
    assert b[1]["prompt"][:2] == b[0]["prompt"] and b[1]["prompt"][2] == b[0]["completion"][0]
    assert b[1]["prompt"][3] == {"role": "user", "content": "compile_error: try again"}
    assert b[1]["kernel_ms"] == pytest.approx(1 / 1.5) and b[1]["gpu"] == "NVIDIA H200"
    assert b[0]["kernel_ms"] is None and b[0]["judge_version"] == 2
    ds = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "cache"))
    assert ds["train"].num_rows == 9


def test_messages_rows_carry_absolute_times_and_the_gpu(run, tmp_path):
    out = tmp_path / "messages"
    export(run, out)
    row = next(r for r in lines(out / "train.jsonl") if r["id"] == f"run1/{A}/2")
    assert (row["kernel_ms"], row["reference_ms"], row["bench_mode"], row["gpu"], row["judge_version"],
            row["torch_compile_ms"]) == (0.5, 1.0, "cold", "NVIDIA H200", 2, 0.8)
    other = next(r for r in lines(out / "train.jsonl") if r["id"] == f"run1/{A}/1")
    assert other["torch_compile_ms"] is None, "no baseline measured for that record"


def test_dpo_trains_on_the_pairs(preference, tmp_path):
    """A few DPOTrainer steps on the export with a tiny Llama and a tokenizer made here; the loss of each
    step is printed (ctest's output) and must be finite and fall on the repeated batch."""
    ds = datasets.load_dataset(str(preference), cache_dir=str(tmp_path / "cache"))["train"]
    tokenizer = tokenizer_for(json.dumps(r) for r in lines(preference / "train.jsonl"))
    config = trl.DPOConfig(output_dir=str(tmp_path / "dpo"), max_steps=12, per_device_train_batch_size=6,
                           learning_rate=5e-3, lr_scheduler_type="constant", beta=0.1, max_length=1024,
                           report_to="none", save_strategy="no", use_cpu=True, logging_steps=1,
                           dataloader_num_workers=0)
    model = tiny_model(len(tokenizer))
    trainer = trl.DPOTrainer(model=model, ref_model=copy.deepcopy(model), args=config, train_dataset=ds,
                             processing_class=tokenizer)
    row = trainer.train_dataset[0]
    assert "__global__ void relu" in tokenizer.decode(row["chosen_ids"]), tokenizer.decode(row["chosen_ids"])
    assert "Write a kernel for" in tokenizer.decode(row["prompt_ids"])
    trainer.train()
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    print("\ndpo: loss by step: " + ", ".join(f"{loss:.4f}" for loss in losses))
    assert len(losses) == 12 and all(math.isfinite(loss) for loss in losses)
    assert abs(losses[0] - math.log(2)) < 0.05, "DPO starts at ln 2 (policy = reference)"
    assert sum(losses[-3:]) / 3 < 0.8 * losses[0], losses
