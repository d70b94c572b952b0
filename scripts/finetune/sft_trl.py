#!/usr/bin/env python3
"""The TRL backend of `kforge finetune-launch` (docs/finetune.md).

Modes, one per run:
  --versions                       print a JSON object of Python and library versions (null: missing),
                                   the CUDA devices torch sees and whether they have bf16
  --read-config FILE               print a YAML or JSON trainer-override file as one JSON object
  --check-template --model M --data D [--eval-data E] [--chat-template FILE] [--assistant-only-loss]
                   [--max-length L]
                                   render the first records with the tokenizer's chat template and
                                   fail with one line when it cannot, or when it drops tool calls;
                                   then render and tokenize every row of D (and E) and print
                                   {"rendered", "tool_calls", "longest_tokens", "longest_line",
                                    "tokens": {"rows", "p50", "p95", "p99", "max", "longest_line",
                                               "longer_than_max_length" (with --max-length)},
                                    "eval_tokens": {...} | null}
  --model M --data D --config CFG --save DIR [--adapter-out DIR] [--eval-data E]
          [--chat-template FILE] [--resume]
                                   train with TRL's SFTTrainer: CFG is a JSON object of SFTConfig
                                   fields plus use_peft and lora_* (peft LoraConfig), written by kforge;
                                   --resume continues from the last checkpoint in output_dir; DIR gets
                                   a model card (README.md) from the run's manifest.json
  --to-jsonl SOURCE --split SPLIT --out FILE
                                   write the rows of a Parquet file or a Hub dataset id (its SPLIT)
                                   as JSON lines into FILE, with the datasets library; print
                                   "N rows" (finetune-launch --data X.parquet or org/name[:split])
  --finish-manifest RUN --exit-status N [--signal TERM]
                                   record in RUN/manifest.json how a batch job ended (ended_at,
                                   exit_status, the last "done" line of its log as result, and
                                   job_signal when a signal stopped it)

Training prints one `kforge-train {json}` line per logging step on stdout (step, loss,
learning_rate, epoch) and a last one with "done": true. Failures in the check modes are one line
on stderr and exit 1; a training failure keeps its traceback (it goes to the run's train.log).
"""

import argparse
import importlib.metadata
import importlib.util
import json
import math
import os
import platform
import sys
import time

PROGRAM = "sft_trl"
PROGRESS_PREFIX = "kforge-train "
LORA_KEYS = ("lora_r", "lora_alpha", "lora_dropout", "lora_target_modules")
RECORDS_TO_RENDER = 16
TOOL_RECORDS_TO_RENDER = 4


class Refusal(Exception):
    """An expected failure: reported as one line, exit 1."""


def fail(message):
    print(f"{PROGRAM}: {message}", file=sys.stderr)
    sys.exit(1)


def package_version(name):
    if importlib.util.find_spec(name.replace("-", "_")) is None:
        return None
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def versions():
    found = {"python": platform.python_version(), "executable": sys.executable}
    for name in ("torch", "transformers", "trl", "peft", "accelerate", "datasets", "tokenizers", "axolotl",
                 "tensorboard", "tensorboardX", "wandb", "trackio"):
        found[name] = package_version(name)
    if found["torch"] is not None:
        import torch

        found["cuda_devices"] = torch.cuda.device_count()
        found["bf16"] = torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    return found


def read_config(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if path.endswith((".yaml", ".yml")):
        try:
            import yaml
        except ImportError:
            raise Refusal(f"{path}: reading YAML needs PyYAML (pip install pyyaml), or give a .json file")
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
            raise Refusal(f"{path}: {where}{getattr(e, 'problem', None) or 'malformed YAML'}")
    else:
        try:
            value = json.loads(text)
        except json.JSONDecodeError as e:
            raise Refusal(f"{path}: line {e.lineno}, column {e.colno}: {e.msg}")
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise Refusal(f"{path}: expected a mapping of trainer settings, got {type(value).__name__}")
    return value


def records(path):
    """(line number, record) for every non-blank line; kforge checked the file before."""
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.strip():
                yield number, json.loads(line)


def conversation(record):
    """The messages a record renders as, and its tools."""
    tools = record.get("tools")
    if isinstance(tools, str):
        tools = json.loads(tools)
    if "messages" in record:
        return record["messages"], tools
    prompt, completion = record["prompt"], record["completion"]
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}, {"role": "assistant", "content": completion}], tools
    return prompt + completion, tools


def records_to_render(path):
    """The first RECORDS_TO_RENDER records, and the first TOOL_RECORDS_TO_RENDER with tool calls
    after them (lines without "tool_calls" are skipped unparsed)."""
    picked, with_calls = [], 0
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            if len(picked) >= RECORDS_TO_RENDER and '"tool_calls"' not in line:
                continue
            record = json.loads(line)
            messages, _ = conversation(record)
            has_calls = any(m.get("tool_calls") for m in messages)
            if len(picked) < RECORDS_TO_RENDER or has_calls:
                picked.append((number, record))
                with_calls += has_calls
            if len(picked) >= RECORDS_TO_RENDER and with_calls >= TOOL_RECORDS_TO_RENDER:
                break
    return picked


def one_line(error):
    return " ".join(f"{type(error).__name__}: {error}".split())[:300]


def load_tokenizer(model, chat_template=None):
    """The model's tokenizer, with the chat template of `chat_template` (a .jinja file, or a folder
    whose tokenizer has one) when given."""
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(model)
    except Exception as e:  # a missing or broken tokenizer is the user's input, not a bug here
        raise Refusal(f"cannot load the tokenizer of {model}: {one_line(e)}")
    if chat_template:
        if os.path.isdir(chat_template):
            template = AutoTokenizer.from_pretrained(chat_template).chat_template
        else:
            try:
                with open(chat_template, encoding="utf-8") as f:
                    template = f.read()
            except OSError as e:
                raise Refusal(f"--chat-template {chat_template}: {e.strerror}")
        if not template:
            raise Refusal(f"--chat-template {chat_template}: no chat template in it")
        tokenizer.chat_template = template
    return tokenizer


def percentile(sorted_values, q):
    """The q-th percentile (nearest rank) of an ascending list."""
    rank = max(1, math.ceil(q / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def measure_tokens(tokenizer, path, max_length=None, batch=256):
    """Tokens of every row of `path` as the chat template renders it (what the trainer sees), and
    how many rows are longer than `max_length` when one is given."""
    counts, longest, longest_line, texts, numbers = [], 0, 0, [], []

    def flush():
        nonlocal longest, longest_line
        for number, ids in zip(numbers, tokenizer(texts, add_special_tokens=False)["input_ids"]):
            counts.append(len(ids))
            if len(ids) > longest:
                longest, longest_line = len(ids), number
        texts.clear()
        numbers.clear()

    for number, record in records(path):
        messages, tools = conversation(record)
        if "prompt" in record and isinstance(record["prompt"], str):
            texts.append(record["prompt"] + record["completion"])
        else:
            try:
                texts.append(tokenizer.apply_chat_template(messages, tools=tools, tokenize=False))
            except Exception as e:
                raise Refusal(f"{path}:{number}: the chat template cannot render this record: {one_line(e)}")
        numbers.append(number)
        if len(texts) == batch:
            flush()
    if texts:
        flush()
    counts.sort()
    measured = {"rows": len(counts), "p50": percentile(counts, 50), "p95": percentile(counts, 95),
                "p99": percentile(counts, 99), "max": counts[-1], "longest_line": longest_line}
    if max_length:
        measured["longer_than_max_length"] = sum(count > max_length for count in counts)
    return measured


def check_template(model, data, assistant_only_loss, chat_template=None, eval_data=None, max_length=None):
    tokenizer = load_tokenizer(model, chat_template)
    if not tokenizer.chat_template:
        raise Refusal(f"the tokenizer of {model} has no chat template; give one with --chat-template FILE")
    rendered, calls = 0, 0
    for number, record in records_to_render(data):
        messages, tools = conversation(record)
        try:
            text = tokenizer.apply_chat_template(messages, tools=tools, tokenize=False)
        except Exception as e:
            raise Refusal(f"{data}:{number}: the chat template of {model} cannot render this record: {one_line(e)}")
        for message in messages:
            for call in message.get("tool_calls") or []:
                name = call["function"]["name"]
                if name not in text:
                    raise Refusal(drops_calls(data, number, model, f'"{name}" is not in the rendered text'))
                if encoded_twice(call["function"].get("arguments"), text):
                    raise Refusal(
                        f"{data}:{number}: the chat template of {model} writes the tool-call arguments as escaped "
                        "JSON text (they are encoded twice): give the arguments as JSON objects (kforge export "
                        "--tool-arguments object, the default)")
                calls += 1
            if message.get("role") == "tool" and message.get("content") and message["content"][:40] not in text:
                raise Refusal(f"{data}:{number}: the chat template of {model} drops tool results")
        if renders_without_calls(tokenizer, messages, tools) == text:
            raise Refusal(drops_calls(data, number, model, "the record renders the same without them"))
        rendered += 1
    if assistant_only_loss:
        check_assistant_mask(tokenizer, model)
    tokens = measure_tokens(tokenizer, data, max_length)
    print(json.dumps({"rendered": rendered, "tool_calls": calls, "longest_tokens": tokens["max"],
                      "longest_line": tokens["longest_line"], "tokens": tokens,
                      "eval_tokens": measure_tokens(tokenizer, eval_data, max_length) if eval_data else None}))


def encoded_twice(arguments, text):
    """Whether the rendered text holds the arguments as an escaped JSON string rather than as JSON."""
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except ValueError:
            return False
        if not isinstance(parsed, dict) or not parsed:
            return False
        return json.dumps(arguments)[1:61] in text
    if isinstance(arguments, dict) and arguments:
        key = next(iter(arguments))
        return f'\\"{key}\\"' in text and f'"{key}"' not in text
    return False


def drops_calls(data, number, model, evidence):
    return (
        f"{data}:{number}: the chat template of {model} drops tool calls ({evidence}); use a model whose "
        "template renders tool_calls, or give one that does with --chat-template FILE"
    )


def renders_without_calls(tokenizer, messages, tools):
    """The record rendered with its tool calls taken out; None when it has none or cannot render so."""
    if not any(m.get("tool_calls") for m in messages):
        return None
    stripped = [
        {**{k: v for k, v in m.items() if k != "tool_calls"}, "content": m.get("content") or ""}
        if m.get("tool_calls")
        else m
        for m in messages
    ]
    try:
        return tokenizer.apply_chat_template(stripped, tools=tools, tokenize=False)
    except Exception:
        return None


def check_assistant_mask(tokenizer, model):
    """Assistant-only loss needs {% generation %} markers, or a template TRL knows how to patch."""
    from trl.chat_template_utils import get_training_chat_template

    try:
        get_training_chat_template(tokenizer)
    except ValueError:
        raise Refusal(
            f"the chat template of {model} has no {{% generation %}} markers and TRL has no training template "
            "for it: set assistant_only_loss: false in --config (loss on whole sequences), or give a "
            "template with the markers with --chat-template FILE"
        )


def load_dataset_rows(path):
    """The records as a datasets.Dataset with messages and tools stored as JSON, so that tool-call
    arguments of different shapes are not merged into one schema padded with nulls."""
    from datasets import Dataset, Features, Json, List

    rows = [record for _, record in records(path)]
    if "messages" in rows[0]:
        columns = {"messages": List(Json())}
    elif isinstance(rows[0]["prompt"], str):
        columns = {"prompt": None, "completion": None}
    else:
        columns = {"prompt": List(Json()), "completion": List(Json())}
    if any("tools" in row for row in rows):
        columns["tools"] = Json()
    kept = [{key: row.get(key) for key in columns} for row in rows]
    if any(kind is None for kind in columns.values()):
        return Dataset.from_list(kept)
    return Dataset.from_list(kept, features=Features(columns))


def precision(config):
    """bf16 where the GPU has it, else fp32 (also on CPU), unless the config says otherwise."""
    import torch

    if "bf16" in config or "fp16" in config:
        return "as configured"
    if torch.cuda.is_available() and torch.cuda.is_bf16_supported():
        config["bf16"] = True
        return f"bf16 on {torch.cuda.get_device_name(0)}"
    config["bf16"] = False
    return "fp32 on " + ("GPU without bf16" if torch.cuda.is_available() else "CPU")


def train(args):
    import torch
    from transformers import AutoTokenizer, PrinterCallback, TrainerCallback
    from trl import SFTConfig, SFTTrainer

    with open(args.config, encoding="utf-8") as f:
        config = json.load(f)
    use_peft = config.pop("use_peft", False)
    # The Trainer takes the checkpoint to resume from as train()'s argument; SFTConfig's field of that
    # name is only carried, so it is taken out here and passed on.
    resume = config.pop("resume_from_checkpoint", None)
    if args.resume:
        resume = True
    if resume is True and not last_checkpoint(config.get("output_dir", "")):
        raise Refusal(f"nothing to resume: no checkpoint-* folder in {config.get('output_dir')}")
    if use_peft and not args.adapter_out:
        raise Refusal("LoRA training (use_peft) needs --adapter-out")
    lora = {key: config.pop(key) for key in LORA_KEYS if key in config}
    how = precision(config)
    fields = SFTConfig.__dataclass_fields__
    if "activation_checkpointing" in fields and not {"activation_checkpointing", "gradient_checkpointing"} & set(config):
        config["activation_checkpointing"] = True  # TRL's default, under the name transformers 5 keeps
    config.setdefault("disable_tqdm", not sys.stderr.isatty())
    try:
        sft_config = SFTConfig(**config)
    except TypeError as e:
        raise Refusal(f"{args.config}: {one_line(e)} (fields: SFTConfig of trl {package_version('trl')})")

    class Progress(TrainerCallback):
        def on_log(self, train_args, state, control, logs=None, **kwargs):
            if not state.is_world_process_zero or not logs:
                return
            line = {"step": state.global_step, "max_steps": state.max_steps}
            line.update({k: v for k, v in logs.items() if isinstance(v, (int, float))})
            print(PROGRESS_PREFIX + json.dumps(line), flush=True)

    peft_config = None
    if use_peft:
        from peft import LoraConfig

        peft_config = LoraConfig(
            r=lora.get("lora_r", 16),
            lora_alpha=lora.get("lora_alpha", 32),
            lora_dropout=lora.get("lora_dropout", 0.05),
            target_modules=lora.get("lora_target_modules", "all-linear"),
            task_type="CAUSAL_LM",
        )
    tokenizer = load_tokenizer(args.model, args.chat_template)
    dataset = load_dataset_rows(args.data)
    eval_dataset = load_dataset_rows(args.eval_data) if args.eval_data else None
    world = int(os.environ.get("WORLD_SIZE", "1"))
    print(
        f"{PROGRAM}: {len(dataset)} records, {how}, {'LoRA' if use_peft else 'full fine-tuning'}, "
        f"{world} process{'es' if world != 1 else ''}, torch {torch.__version__}",
        file=sys.stderr,
        flush=True,
    )
    trainer = SFTTrainer(
        model=args.model,
        args=sft_config,
        train_dataset=dataset,
        eval_dataset=eval_dataset,
        processing_class=tokenizer,
        peft_config=peft_config,
        callbacks=[Progress()],
    )
    trainer.remove_callback(PrinterCallback)  # Progress prints the same figures as JSON
    start = time.time()
    if resume:
        print(f"{PROGRAM}: resuming from {last_checkpoint(config['output_dir']) if resume is True else resume}",
              file=sys.stderr, flush=True)
    result = trainer.train(resume_from_checkpoint=resume)
    save(trainer, tokenizer, args, use_peft)
    eval_loss = trainer.evaluate().get("eval_loss") if eval_dataset is not None else None  # every rank takes part
    if trainer.is_world_process_zero():
        done = {"done": True, "train_loss": result.training_loss, "steps": result.global_step,
                "runtime_s": round(time.time() - start, 3), "model": args.save}
        if not math.isfinite(result.training_loss):
            done["error"] = "the training loss is not finite"
        if eval_loss is not None:
            done["eval_loss"] = eval_loss
        write_model_card(args, done, use_peft)
        print(PROGRESS_PREFIX + json.dumps(done), flush=True)
        if "error" in done:
            sys.exit(1)


def last_checkpoint(output_dir):
    """The checkpoint-N folder with the highest N in output_dir, or None."""
    try:
        steps = [int(name.split("-", 1)[1]) for name in os.listdir(output_dir)
                 if name.startswith("checkpoint-") and name.split("-", 1)[1].isdigit()]
    except OSError:
        return None
    return os.path.join(output_dir, f"checkpoint-{max(steps)}") if steps else None


def front_matter(path):
    """The YAML front matter of a model card as a dict; {} when there is none or it cannot be read."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if not text.startswith("---\n"):
            return {}
        import yaml

        value = yaml.safe_load(text[4:text.index("\n---", 4)])
        return value if isinstance(value, dict) else {}
    except Exception:  # a card that cannot be read has no front matter to take
        return {}


def hub_name_of(folder):
    """The Hub id a local model folder was saved from (config.json's _name_or_path), when it looks like one."""
    try:
        with open(os.path.join(folder, "config.json"), encoding="utf-8") as f:
            name = json.load(f).get("_name_or_path", "")
    except (OSError, ValueError, AttributeError):
        return None
    return name if isinstance(name, str) and name.count("/") == 1 and not os.path.isabs(name) else None


def write_model_card(args, done, use_peft):
    """--save/README.md: what the model was trained from and on, from the run's manifest.json."""
    try:
        with open(os.path.join(os.path.dirname(os.path.abspath(args.save)), "manifest.json"), encoding="utf-8") as f:
            manifest = json.load(f)
    except (OSError, ValueError):
        manifest = {}
    dataset = manifest.get("dataset", {})
    kforge = manifest.get("versions", {}).get("kforge", "unknown")
    base = manifest.get("settings", {}).get("model", args.model)
    base_card = front_matter(os.path.join(base, "README.md")) if os.path.isabs(base) else {}
    hub_base = base if not os.path.isabs(base) else base_card.get("base_model") or hub_name_of(base)
    license_id = base_card.get("license") or "other"
    hub_data = dataset.get("hub_id")
    lines = ["---", "library_name: transformers", "pipeline_tag: text-generation", f"license: {license_id}",
             "tags:", "- kforge", "- cuda", "- trl", "- sft"]
    if hub_base:
        lines += [f"base_model: {hub_base}"]
    if hub_data:
        lines += ["datasets:", f"- {hub_data}"]
    name = os.path.basename(os.path.dirname(os.path.abspath(args.save)))
    lines += ["---", "", f"# {name}: {os.path.basename(base.rstrip('/'))} fine-tuned on CUDA kernels", "",
              f"Fine-tuned from `{base}` with TRL's SFTTrainer ({'LoRA, merged' if use_peft else 'all weights'}) "
              f"by `kforge finetune-launch` (kforge {kforge}) on CUDA kernels written by teacher LLMs.", "",
              "| | |", "| --- | --- |",
              f"| base model | `{base}` |",
              f"| dataset | `{dataset.get('path', args.data)}` |",
              f"| dataset sha256 | `{dataset.get('sha256', 'unknown')}` |",
              f"| records | {dataset.get('records', 'unknown')} |",
              f"| steps | {done['steps']} |",
              f"| final training loss | {done['train_loss']:.4f} |"]
    if done.get("eval_loss") is not None:
        lines += [f"| evaluation loss | {done['eval_loss']:.4f} |"]
    if license_id == "other":
        lines += ["| licence | the base model's terms |"]
    lines += [f"| kforge | {kforge} |",
              f"| trl | {package_version('trl')} |", f"| transformers | {package_version('transformers')} |", "",
              "The run's manifest.json beside this folder holds the full configuration and command.", ""]
    with open(os.path.join(args.save, "README.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def to_jsonl(source, split, out):
    """The rows of a Parquet file or a Hub dataset as JSON lines (List(Json()) columns decode to objects)."""
    try:
        import datasets
    except ImportError:
        raise Refusal("reading Parquet or a Hub dataset needs the datasets package (scripts/setup.sh --finetune)")
    try:
        if source.endswith(".parquet"):
            rows = datasets.load_dataset("parquet", data_files={split: source}, split=split)
        else:
            rows = datasets.load_dataset(source, split=split)
    except Exception as e:  # a missing file, repository or split: the library's own words, on one line
        raise Refusal(one_line(e))
    count = 0
    with open(out, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    print(f"{count} rows")


def finish_manifest(run, exit_status, signal=None):
    """Completes RUN/manifest.json from inside a batch job: its end time, exit status and result, and the
    signal the job received (TERM: the time limit's warning or scancel) when one stopped it."""
    import glob
    import tempfile

    path = os.path.join(run, "manifest.json")
    with open(path, encoding="utf-8") as f:
        manifest = json.load(f)
    manifest["ended_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    manifest["exit_status"] = exit_status
    manifest["completed_by"] = "job"
    if signal:
        manifest["job_signal"] = signal
    job = os.environ.get("SLURM_JOB_ID")
    if job:
        manifest["slurm_job_id"] = manifest.get("slurm_job_id") or job
    logs = [os.path.join(run, f"slurm-{job}.log")] if job else sorted(glob.glob(os.path.join(run, "slurm-*.log")))
    for log in logs:
        try:
            with open(log, encoding="utf-8", errors="replace") as f:
                for line in f:
                    if line.startswith(PROGRESS_PREFIX):
                        step = json.loads(line[len(PROGRESS_PREFIX):])
                        if isinstance(step, dict) and step.get("done"):
                            manifest["result"] = step
        except (OSError, ValueError):
            continue
    handle, temporary = tempfile.mkstemp(dir=run, prefix=".manifest.")
    with os.fdopen(handle, "w", encoding="utf-8") as f:
        f.write(json.dumps(manifest, indent=2) + "\n")
    os.replace(temporary, path)


def save(trainer, tokenizer, args, use_peft):
    """The final model in --save, loadable with AutoModelForCausalLM; with LoRA the adapter goes to
    --adapter-out and --save gets the merged weights (what a server loads)."""
    if not use_peft:
        trainer.save_model(args.save)
        if trainer.is_world_process_zero():
            tokenizer.save_pretrained(args.save)
        return
    trainer.save_model(args.adapter_out)
    trainer.accelerator.wait_for_everyone()
    if trainer.is_world_process_zero():
        merged = trainer.accelerator.unwrap_model(trainer.model).merge_and_unload()
        merged.save_pretrained(args.save)
        tokenizer.save_pretrained(args.save)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--versions", action="store_true")
    parser.add_argument("--read-config", metavar="FILE")
    parser.add_argument("--check-template", action="store_true")
    parser.add_argument("--assistant-only-loss", action="store_true")
    parser.add_argument("--model")
    parser.add_argument("--data")
    parser.add_argument("--config")
    parser.add_argument("--save")
    parser.add_argument("--adapter-out")
    parser.add_argument("--eval-data")
    parser.add_argument("--chat-template")
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--max-length", type=int)
    parser.add_argument("--finish-manifest", metavar="RUN")
    parser.add_argument("--exit-status", type=int)
    parser.add_argument("--signal")
    parser.add_argument("--to-jsonl", metavar="SOURCE")
    parser.add_argument("--split", default="train")
    parser.add_argument("--out")
    args = parser.parse_args()
    try:
        if args.versions:
            print(json.dumps(versions()))
        elif args.read_config:
            print(json.dumps(read_config(args.read_config)))
        elif args.check_template:
            if not args.model or not args.data:
                fail("--check-template needs --model and --data")
            check_template(args.model, args.data, args.assistant_only_loss, args.chat_template, args.eval_data,
                           args.max_length)
        elif args.to_jsonl:
            if not args.out:
                fail("--to-jsonl needs --out")
            to_jsonl(args.to_jsonl, args.split, args.out)
        elif args.finish_manifest:
            if args.exit_status is None:
                fail("--finish-manifest needs --exit-status")
            finish_manifest(args.finish_manifest, args.exit_status, args.signal)
        else:
            if not (args.model and args.data and args.config and args.save):
                fail("training needs --model, --data, --config and --save")
            if package_version("trl") is None:
                fail(f"trl is not installed in {sys.executable}: pip install -r scripts/requirements-finetune.txt")
            train(args)
    except Refusal as e:
        fail(str(e))
    except OSError as e:
        fail(one_line(e))


if __name__ == "__main__":
    main()
