"""One reference program imported as a task: the tags its name suggests, the licence of its checkout
(KernelBench's LICENSE file), the description its Model's docstring gives, then the exporter (exporter.build). Used by export_reference.py for one problem and by
bulk.py's worker processes for each problem of a batch."""

import sys
from pathlib import Path

from . import licensing, schema
from .schema import TaskError

_TAG_WORDS = [
    ("conv", "convolution"), ("matmul", "matmul"), ("gemm", "matmul"), ("linear", "matmul"),
    ("softmax", "softmax"), ("norm", "normalization"), ("attention", "attention"), ("relu", "elementwise"),
    ("gelu", "elementwise"), ("sigmoid", "elementwise"), ("tanh", "elementwise"), ("sum", "reduction"),
    ("mean", "reduction"), ("max", "reduction"), ("min", "reduction"), ("argm", "reduction"),
    ("cum", "scan"), ("pool", "pooling"), ("loss", "loss"), ("lstm", "rnn"), ("gru", "rnn"), ("rnn", "rnn"),
]


def devices(arg):
    """The devices of --device (a comma list of cpu, cuda; default cpu plus cuda when present)."""
    import torch
    if arg:
        names = [d.strip() for d in arg.split(",") if d.strip()]
    else:
        names = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    for d in names:
        if d not in ("cpu", "cuda"):
            raise TaskError(f"--device: unknown device '{d}' (cpu, cuda)")
        if d == "cuda" and not torch.cuda.is_available():
            raise TaskError("--device cuda: no CUDA device on this machine")
    return names


def logger(args):
    """A function that prints a line to stderr with --verbose, else does nothing."""
    return (lambda m: print(m, file=sys.stderr)) if args.verbose else (lambda m: None)


def _docstring(path):
    import ast
    try:
        tree = ast.parse(Path(path).read_text())
    except (OSError, SyntaxError):
        return ""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Model":
            return " ".join((ast.get_docstring(node) or "").split())
    return ""


def import_one(args, level=None):
    """Imports the program args.file as the task args.id under args.out: (task folder, task.json, notes)."""
    from . import exporter
    name = args.id.rsplit("/", 1)[-1]
    base = {"id": args.id}
    if level is not None:
        base["level"] = level
    low = name.lower()
    tags = ["kernelbench"] if args.command == "kernelbench" else []
    tags += sorted({tag for word, tag in _TAG_WORDS if word in low})
    base["tags"] = tags
    notes = []
    if args.command == "kernelbench":
        spdx, note = licensing.license_of(args.file)
        if spdx:
            base["license"] = spdx
        if note:
            notes.append(note)
    doc = _docstring(args.file)
    base["description"] = doc or f"Implement the PyTorch program {name} (see the reference code)."
    out_dir = schema.task_dir(args.out, args.id)
    doc, build_notes = exporter.build(args.file, args.id, out_dir, base=base, devices=devices(args.device),
                                      seed=args.seed, symbols_from_module=True, log=logger(args))
    return out_dir, doc, notes + build_notes
