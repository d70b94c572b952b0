#!/usr/bin/env python3
"""`kforge export` output as training data: the messages and pairs exports load with
datasets.load_dataset("json", ...), and TRL's SFTTrainer tokenises them with a chat template and takes a
training step on a tiny model. Everything is made here, offline: the trajectory records, a byte-level BPE
tokenizer trained on the records' text, a chat template, and a one-layer Llama.

  usage: check_trl_export.py KFORGE_BINARY

Fails (exit 1) when datasets, trl, transformers or tokenizers are missing: run scripts/setup.sh."""
import json
import os
import subprocess
import sys
import tempfile

try:
    import datasets
    import tokenizers
    import torch
    import transformers
    import trl
except ImportError as e:
    sys.exit(f"FAIL: {e.name} is not installed in {sys.executable}: run scripts/setup.sh "
             "(the venv needs datasets, trl, transformers and tokenizers)")

RELU = ('extern "C" __global__ void relu(const float* x, float* y, long long n) {\n'
        "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
        "  if (i < n) y[i] = fmaxf(x[i], 0.f);\n}\n")
LAUNCHES = [{"kernel": "relu", "grid": ["cdiv(numel(x), 256)"], "block": [256],
             "args": ["x", "out0", "i64:numel(x)"]}]
TOOLS = [{"type": "function", "function": {
    "name": "run", "description": "Compile and check a solution",
    "parameters": {"type": "object", "properties": {"source": {"type": "string"}, "launches": {"type": "array"}},
                   "required": ["source", "launches"]}}}]

# A template in the usual shape: tools first, tool-call arguments as objects written with tojson, assistant turns marked for
# assistant-only loss, truthiness checks so that keys datasets fills with None are ignored.
CHAT_TEMPLATE = (
    "{%- if tools %}<|tools|>{{ tools | tojson }}<|end|>\n{%- endif %}"
    "{%- for message in messages %}"
    "<|{{ message['role'] }}|>"
    "{%- if message['role'] == 'assistant' %}{% generation %}{{ message['content'] or '' }}"
    "{%- if message['tool_calls'] %}{%- for call in message['tool_calls'] %}"
    "<|call|>{{ call['function']['name'] }} {{ call['function']['arguments'] | tojson }}"
    "{%- endfor %}{%- endif %}<|end|>{% endgeneration %}\n"
    "{%- elif message['role'] == 'tool' %}{{ message['name'] }}: {{ message['content'] }}<|end|>\n"
    "{%- else %}{{ message['content'] }}<|end|>\n{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}<|assistant|>{%- endif %}")
SPECIAL = ["<|system|>", "<|user|>", "<|assistant|>", "<|tool|>", "<|tools|>", "<|call|>", "<|end|>", "<|pad|>"]


def record(task, level, sample, protocol):
    """A kforge.trajectory/1 record: a failed first turn, then a correct one."""
    messages = [{"role": "system", "content": "You write CUDA kernels."},
                {"role": "user", "content": f"Write a kernel for {task}."}]
    attempts = []
    for turn in (1, 2):
        call = f"call_{turn}"
        if protocol == "tools":
            messages.append({"role": "assistant", "content": "", "reasoning_content": "hmm",
                             "tool_calls": [{"id": call, "name": "run",
                                             "arguments": {"source": RELU, "launches": LAUNCHES}}]})
            messages.append({"role": "tool", "tool_call_id": call,
                             "content": "ok" if turn == 2 else "compile_error: expected ';'"})
        else:
            messages.append({"role": "assistant", "content": f"```cuda\n{RELU}```\n```json\n"
                             + json.dumps({"launches": LAUNCHES}) + "\n```\n"})
            if turn == 1:
                messages.append({"role": "user", "content": "compile_error: expected ';'"})
        solution = {"schema": "kforge.solution/1", "task": task, "source": RELU + f"// {turn}\n",
                    "launches": LAUNCHES, "scratch": [], "options": []}
        attempts.append({"turn": turn, "tool_call_id": call if protocol == "tools" else "",
                         "status": "ok" if turn == 2 else "compile_error", "parse_error": "",
                         "compiled": turn == 2, "correct": turn == 2, "speedup": 1.5 if turn == 2 else None,
                         "solution": solution, "verdict": None, "bench": None})
    return {"schema": "kforge.trajectory/1", "id": f"run1/{task}/{sample}", "run_id": "run1", "sample": sample,
            "task": {"id": task, "level": level, "tags": ["elementwise"], "view": "code", "source": "kernelbench",
                     "license": "MIT", "reference_hash": "", "reference_source": "import torch\n"},
            "teacher": {"provider": "replay", "model": "teacher-1", "params": {}},
            "protocol": protocol, "compile_only": False, "messages": messages,
            "tools": TOOLS if protocol == "tools" else [], "attempts": attempts, "best": 1,
            "outcome": {"stop": "target_reached", "error": ""}, "usage": {}, "timing": {}, "device": None,
            "kforge_version": "0.1.0", "created_at": "2025-01-01T00:00:00Z"}


def export(kforge, run, out, fmt):
    done = subprocess.run([kforge, "export", run, "--out", out, "--format", fmt, "--split", "val=0.3"],
                          capture_output=True, text=True)
    assert done.returncode == 0, f"kforge export --format {fmt} failed:\n{done.stderr}"
    files = {split: os.path.join(out, f"{split}.jsonl") for split in ("train", "validation")
             if os.path.exists(os.path.join(out, f"{split}.jsonl"))}
    assert "train" in files, f"no train split in {out}"
    return datasets.load_dataset("json", data_files=files)


def tokenizer_for(texts):
    tok = tokenizers.Tokenizer(tokenizers.models.BPE(unk_token=None))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(vocab_size=400, special_tokens=SPECIAL,
                                             initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer)
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|end|>", pad_token="<|pad|>")
    fast.chat_template = CHAT_TEMPLATE
    return fast


def tiny_model(vocab_size):
    config = transformers.LlamaConfig(vocab_size=vocab_size, hidden_size=32, intermediate_size=64,
                                      num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2,
                                      max_position_embeddings=4096)
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(config)


def train_one_step(dataset, tokenizer, work, assistant_only):
    config = trl.SFTConfig(output_dir=work, max_steps=1, per_device_train_batch_size=2, max_length=2048,
                           report_to="none", save_strategy="no", use_cpu=True, logging_steps=1,
                           assistant_only_loss=assistant_only, dataloader_num_workers=0)
    trainer = trl.SFTTrainer(model=tiny_model(len(tokenizer)), args=config, train_dataset=dataset,
                             processing_class=tokenizer)
    row = trainer.train_dataset[0]
    assert len(row["input_ids"]) > 50, "the first row tokenised to almost nothing"
    text = tokenizer.decode(row["input_ids"])
    assert "__global__ void relu" in text, f"the kernel is not in the tokenised text: {text[:300]!r}"
    if assistant_only:
        learned = tokenizer.decode([t for t, label in zip(row["input_ids"], row["labels"]) if label != -100])
        assert "Write a kernel" not in learned and "relu" in learned, f"not only the assistant turns: {learned[:300]!r}"
    result = trainer.train()
    assert result.global_step == 1 and result.training_loss > 0, result
    return trainer


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    kforge = sys.argv[1]
    with tempfile.TemporaryDirectory() as work:
        run = os.path.join(work, "run")
        os.makedirs(run)
        with open(os.path.join(run, "trajectories.jsonl"), "w") as f:
            for i in range(8):
                task = f"kernelbench/level{1 + i % 2}/{i}_Task"
                f.write(json.dumps(record(task, 1 + i % 2, 0, "tools" if i % 2 else "text")) + "\n")

        messages = export(kforge, run, os.path.join(work, "messages"), "messages")
        train = messages["train"]
        assert {"messages", "tools", "task", "teacher_model", "run_id"} <= set(train.column_names), train.column_names
        rows = list(messages["train"]) + (list(messages["validation"]) if "validation" in messages else [])
        assert len(rows) == 8, len(rows)
        with_tools = [r for r in rows if r["tools"]]
        assert len(with_tools) == 4, "the tools-protocol records carry their tool specs"
        call = next(m for m in with_tools[0]["messages"] if m["role"] == "assistant")["tool_calls"][0]
        assert call["type"] == "function" and call["function"]["arguments"]["source"] == RELU, call
        assert all(m.get("reasoning_content") is None for r in rows for m in r["messages"]), "reasoning is off"

        tokenizer = tokenizer_for(json.dumps(r) for r in rows)
        rendered = tokenizer.apply_chat_template(with_tools[0]["messages"], tools=with_tools[0]["tools"],
                                                 tokenize=False)
        assert "<|tools|>" in rendered and "<|call|>run" in rendered and "run: compile_error" in rendered, rendered
        train_one_step(train, tokenizer, os.path.join(work, "sft-messages"), assistant_only=True)

        pairs = export(kforge, run, os.path.join(work, "pairs"), "pairs")
        assert {"prompt", "completion"} <= set(pairs["train"].column_names), pairs["train"].column_names
        trainer = train_one_step(pairs["train"], tokenizer, os.path.join(work, "sft-pairs"), assistant_only=False)
        labels = trainer.train_dataset[0]["labels"]
        assert -100 in labels and any(label != -100 for label in labels), "only the completion is learned"
    print(f"ok: messages and pairs exports load with datasets {datasets.__version__} and train with "
          f"trl {trl.__version__} (transformers {transformers.__version__})")


if __name__ == "__main__":
    main()
