#!/usr/bin/env python3
"""Makes a tiny randomly initialised causal LM for tests: `make_tiny_model.py OUT`.

OUT gets a 2-layer Llama (hidden size 64) and a byte-level BPE tokenizer trained here on text built
below, saved with a chat template that renders system, user, assistant and tool messages, tools and
tool calls, and marks assistant turns with {% generation %} for assistant-only loss. Nothing is
downloaded. The same OUT is written for the same arguments (fixed seeds).
"""

import argparse
import json
import sys

# ChatML-like. Assistant turns, their end-of-turn token included, lie inside {% generation %}, so the
# model learns to stop. Tool-call arguments may be a JSON string or an object.
CHAT_TEMPLATE = (
    "{% if tools %}"
    "<|im_start|>system\n"
    "{% if messages[0].role == 'system' %}{{ messages[0].content }}\n\n{% endif %}"
    "# Tools\n"
    "{% for tool in tools %}\n{{ tool | tojson }}{% endfor %}<|im_end|>\n"
    "{% elif messages[0].role == 'system' %}"
    "<|im_start|>system\n{{ messages[0].content }}<|im_end|>\n"
    "{% endif %}"
    "{% for message in messages %}"
    "{% if message.role == 'system' and loop.first %}"
    "{% elif message.role == 'assistant' %}"
    "<|im_start|>assistant\n"
    "{% generation %}"
    "{% if message.reasoning_content %}<think>{{ message.reasoning_content }}</think>\n{% endif %}"
    "{% if message.content %}{{ message.content }}{% endif %}"
    "{% for call in message.tool_calls or [] %}"
    "<tool_call>{\"name\": \"{{ call.function.name }}\", \"arguments\": "
    "{% if call.function.arguments is string %}{{ call.function.arguments }}"
    "{% else %}{{ call.function.arguments | tojson }}{% endif %}}</tool_call>"
    "{% endfor %}"
    "<|im_end|>{% endgeneration %}{{ '\\n' }}"
    "{% elif message.role == 'tool' %}"
    "<|im_start|>tool\n{{ message.content }}<|im_end|>\n"
    "{% else %}"
    "<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def training_text():
    """Text the tokenizer learns from: template literals, CUDA, JSON and prose, all made here."""
    words = [
        "system", "user", "assistant", "tool", "tool_call", "think", "name", "arguments", "compile",
        "verify", "kernel", "__global__", "void", "float", "const", "int", "threadIdx.x", "blockIdx.x",
        "blockDim.x", "return", "if", "for", "extern", "\"C\"", "relu", "softmax", "matmul", "result",
        "status", "ok", "error", "launch", "grid", "block", "shared", "memory", "the", "a", "of", "to",
        "and", "is", "write", "fast", "CUDA", "task", "output", "input", "n", "x", "y", "i",
    ]
    lines = []
    for i in range(400):
        picked = [words[(i * 7 + k * 13) % len(words)] for k in range(12)]
        lines.append(" ".join(picked))
        lines.append(json.dumps({"name": words[i % len(words)], "arguments": {"n": i, "src": picked[0]}}))
        lines.append("extern \"C\" __global__ void k%d(const float* x, float* y, int n) "
                     "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] * %d.0f; }" % (i, i))
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="folder to write the model and tokenizer to")
    parser.add_argument("--vocab-size", type=int, default=1024)
    args = parser.parse_args()

    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=args.vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(training_text(), trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        chat_template=CHAT_TEMPLATE,
    )

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=16384,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
        tie_word_embeddings=True,
    )
    model = LlamaForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(args.out)
    tokenizer.save_pretrained(args.out)
    count = sum(p.numel() for p in model.parameters())
    print(f"make_tiny_model: {args.out}: llama, {count} parameters, vocabulary {len(tokenizer)}", file=sys.stderr)


if __name__ == "__main__":
    main()
