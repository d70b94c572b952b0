#!/usr/bin/env python3
"""The GRPO backend of `kforge finetune-launch --trainer grpo` (docs/rl.md).

  --model M --servers ADDR[,ADDR...] --config CFG --save DIR [--token-file FILE] [--data TASKS]
  [--adapter-out DIR] [--protocol text|tools] [--resume]

Trains with TRL's GRPOTrainer. The prompts are kforge generate's, asked of the first server (the
`task_id` column of --data, a JSON-lines file, else every task the server holds); the reward is
kforge's shaped reward, judged by every server named: of each completion (kforge_client.KforgeReward)
with --protocol text, of each rollout's run and submit tool calls (kforge_client.KforgeToolEnv, TRL's
environment_factory) with --protocol tools. CFG is a JSON
object of GRPOConfig fields plus use_peft and lora_*, written by kforge. Prints one
`kforge-train {json}` line per logging step (step, loss, reward, ...) and a last one with "done": true.
"""

import argparse
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sft_trl  # noqa: E402  (the SFT backend's helpers: precision, tokenizer, saving)

PROGRAM = "grpo_trl"


def kforge_client():
    """The client package: installed, else the repository's python/ folder."""
    try:
        import kforge_client
    except ImportError:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
        import kforge_client
    return kforge_client


def task_ids(client, data):
    if not data:
        return [t["id"] for t in client.tasks()]
    ids = []
    with open(data, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            if not isinstance(row, dict) or not isinstance(row.get("task_id"), str):
                raise sft_trl.Refusal(f"{data}:{number}: expected an object with a string task_id")
            ids.append(row["task_id"])
    if not ids:
        raise sft_trl.Refusal(f"{data}: no task ids")
    return ids


def train(args):
    import torch
    from datasets import Dataset
    from transformers import PrinterCallback, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    kc = kforge_client()
    client = kc.Client(args.servers, token_file=args.token_file)
    with open(args.config, encoding="utf-8") as f:
        config = json.load(f)
    use_peft = config.pop("use_peft", False)
    resume = config.pop("resume_from_checkpoint", None)
    if args.resume:
        resume = True
    if resume is True and not sft_trl.last_checkpoint(config.get("output_dir", "")):
        raise sft_trl.Refusal(f"nothing to resume: no checkpoint-* folder in {config.get('output_dir')}")
    if use_peft and not args.adapter_out:
        raise sft_trl.Refusal("LoRA training (use_peft) needs --adapter-out")
    lora = {key: config.pop(key) for key in sft_trl.LORA_KEYS if key in config}
    how = sft_trl.precision(config)
    config.setdefault("disable_tqdm", not sys.stderr.isatty())
    try:
        grpo_config = GRPOConfig(**config)
    except (TypeError, ValueError) as e:
        raise sft_trl.Refusal(f"{args.config}: {sft_trl.one_line(e)} (fields: GRPOConfig of trl "
                              f"{sft_trl.package_version('trl')})")

    ids = task_ids(client, args.data)
    prompts = {}
    for task in ids:
        if task not in prompts:
            prompts[task] = client.prompt(task, args.protocol)
    dataset = Dataset.from_list([{"prompt": prompts[t]["messages"], "task_id": t} for t in ids])
    # Text: each completion is judged as a whole (a reward function). Tools: each rollout is an
    # environment whose run and submit tools are judged as they are called (TRL's environment_factory).
    reward = kc.KforgeReward(client=client, task_column="task_id", protocol="text")
    environments = []

    def environment():
        environments.append(kc.KforgeToolEnv(client, "task_id"))
        return environments[-1]

    def step_results():
        if args.protocol == "text":
            return reward.last_results
        # TRL reuses its instances, and reset() clears each one's results: they hold this step's calls.
        return [r for env in environments for r in env.results]

    class Progress(TrainerCallback):
        def on_log(self, train_args, state, control, logs=None, **kwargs):
            if not state.is_world_process_zero or not logs:
                return
            line = {"step": state.global_step, "max_steps": state.max_steps}
            line.update({k: v for k, v in logs.items() if isinstance(v, (int, float))})
            statuses = {}
            for r in step_results():
                statuses[r.get("status", "?")] = statuses.get(r.get("status", "?"), 0) + 1
            line["kforge_statuses"] = statuses
            print(sft_trl.PROGRESS_PREFIX + json.dumps(line), flush=True)

    peft_config = None
    if use_peft:
        from peft import LoraConfig

        peft_config = LoraConfig(r=lora.get("lora_r", 16), lora_alpha=lora.get("lora_alpha", 32),
                                 lora_dropout=lora.get("lora_dropout", 0.05),
                                 target_modules=lora.get("lora_target_modules", "all-linear"), task_type="CAUSAL_LM")
    tokenizer = sft_trl.load_tokenizer(args.model)
    print(f"{PROGRAM}: {len(dataset)} prompts over {len(prompts)} tasks, reward from {', '.join(client.servers)}, "
          f"{how}, {'LoRA' if use_peft else 'full weights'}, torch {torch.__version__}", file=sys.stderr, flush=True)
    if args.protocol == "text":
        trainer = GRPOTrainer(model=args.model, reward_funcs=[reward], args=grpo_config, train_dataset=dataset,
                              processing_class=tokenizer, peft_config=peft_config, callbacks=[Progress()])
    else:
        trainer = GRPOTrainer(model=args.model, args=grpo_config, train_dataset=dataset, processing_class=tokenizer,
                              peft_config=peft_config, callbacks=[Progress()], environment_factory=environment)
    trainer.remove_callback(PrinterCallback)
    start = time.time()
    result = trainer.train(resume_from_checkpoint=resume)
    sft_trl.save(trainer, tokenizer, args, use_peft)
    if trainer.is_world_process_zero():
        done = {"done": True, "train_loss": result.training_loss, "steps": result.global_step,
                "runtime_s": round(time.time() - start, 3), "model": args.save,
                "judged_by": client.judged_by}
        if not math.isfinite(result.training_loss):
            done["error"] = "the training loss is not finite"
        print(sft_trl.PROGRESS_PREFIX + json.dumps(done), flush=True)
        if "error" in done:
            sys.exit(1)
    client.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--servers", required=True, help="kforge serve addresses, comma-separated")
    parser.add_argument("--token-file")
    parser.add_argument("--data", help="JSON lines with a task_id column (default: every task of the server)")
    parser.add_argument("--config", required=True)
    parser.add_argument("--save", required=True)
    parser.add_argument("--adapter-out")
    parser.add_argument("--protocol", default="text", choices=["text", "tools"])
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    judge_error = kforge_client().JudgeError
    try:
        if sft_trl.package_version("trl") is None:
            sft_trl.fail(f"trl is not installed in {sys.executable}: pip install -r scripts/requirements-finetune.txt")
        train(args)
    except judge_error as e:  # a server that refused or went away: one line, not a traceback
        print(f"{PROGRAM}: kforge serve: {e}", file=sys.stderr)
        sys.exit(1)
    except sft_trl.Refusal as e:
        print(f"{PROGRAM}: {e}", file=sys.stderr)
        sys.exit(1)
    except OSError as e:
        print(f"{PROGRAM}: {sft_trl.one_line(e)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
