"""Loading a KernelBench-style reference program and probing its inputs without materialising them.

A reference file defines `Model`, `get_inputs()` and (optionally) `get_init_inputs()`, reading
sizes from module-level integers. Overrides replace those integers after the file ran, which is
how variants are built (docs/tasks.md, "Variants").
"""

import ast
import importlib.util
import inspect
import itertools
import sys
import traceback
import types

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from . import provenance
from .schema import DTYPES, TaskError

_counter = itertools.count()


def dtype_name(dtype, what):
    name = str(dtype).replace("torch.", "")
    if name not in DTYPES:
        raise TaskError(f"{what}: unsupported dtype {name}")
    return name


def load(path, overrides=None):
    """Runs the file as a fresh module and applies {name: int} overrides to its globals."""
    name = f"_kforge_ref_{next(_counter)}"
    module = types.ModuleType(name)  # any file name, not only *.py
    module.__file__ = str(path)
    try:
        source = open(path, encoding="utf-8").read()
        code = compile(source, str(path), "exec")
    except SyntaxError as e:
        raise TaskError(f"{path}:{e.lineno}: SyntaxError: {e.msg}") from None
    except (ValueError, UnicodeDecodeError) as e:  # NUL bytes, invalid UTF-8
        raise TaskError(f"{path}: not a Python source file ({type(e).__name__})") from None
    except OSError as e:
        raise TaskError(f"{path}: {e.strerror or e}") from None
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)
    except Exception as e:  # the program itself failed: report where
        raise TaskError(f"{path}:{_user_line(e, path)}: {type(e).__name__}: {_first_line(e)}") from None
    for key, value in (overrides or {}).items():
        current = module.__dict__.get(key)
        if isinstance(current, bool) or not isinstance(current, int):
            raise TaskError(f"{path}: symbol '{key}' is not a module-level integer")
        module.__dict__[key] = value
    for required in ("Model", "get_inputs"):
        if not callable(module.__dict__.get(required)):
            raise TaskError(f"{path}: no {required} defined")
    return module


def int_globals(module):
    """Public module-level integers, in definition order (KernelBench's size constants)."""
    return {
        k: v for k, v in vars(module).items()
        if not k.startswith("_") and isinstance(v, int) and not isinstance(v, bool)
    }


def _first_line(e):
    text = str(e).strip().splitlines()
    return text[0][:300] if text else ""


def _user_line(e, path):
    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == str(path)]
    return frames[-1].lineno if frames else "?"


def call_user(fn, what, path, *args):
    try:
        return fn(*args)
    except TaskError:
        raise
    except Exception as e:
        raise TaskError(f"{path}:{_user_line(e, path)}: {what} failed: {type(e).__name__}: {_first_line(e)}") from None


def forward_names(model_cls, count):
    """Names of the first `count` positional parameters of Model.forward."""
    params = list(inspect.signature(model_cls.forward).parameters.values())[1:]
    names = []
    for i in range(count):
        if i < len(params) and params[i].kind in (params[i].POSITIONAL_ONLY, params[i].POSITIONAL_OR_KEYWORD):
            names.append(params[i].name)
        else:
            names.append(f"arg{i}")
    return names


class Probe:
    """What get_inputs() returns: items (tensor or constant), tensor specs and init tags."""

    def __init__(self, module, path):
        self.module, self.path = module, path
        tracker = provenance.InitTracker()
        with FakeTensorMode(allow_non_fake_inputs=True), tracker:
            items = call_user(module.get_inputs, "get_inputs()", path)
        if not isinstance(items, (list, tuple)):
            raise TaskError(f"{path}: get_inputs() must return a list, got {type(items).__name__}")
        self.names = forward_names(module.Model, len(items))
        self.tensors = []  # (position, name, shape, dtype_name, tag)
        self.constants = {}
        for pos, (name, item) in enumerate(zip(self.names, items)):
            if isinstance(item, torch.Tensor):
                dt = dtype_name(item.dtype, f"input '{name}'")
                self.tensors.append((pos, name, tuple(item.shape), dt, tracker.tag_of(item)))
            elif isinstance(item, (int, float)) and not isinstance(item, bool):
                self.constants[name] = item
            elif isinstance(item, bool):
                self.constants[name] = int(item)
            else:
                raise TaskError(f"{path}: get_inputs() item {pos} ('{name}') is a {type(item).__name__}, "
                                "expected a tensor or a number")
        self.count = len(items)
        self.bytes = sum(_nbytes(s, d) for _, _, s, d, _ in self.tensors)

    def materialise(self, seed):
        """Real inputs for one seed: the full item list, in get_inputs order."""
        torch.manual_seed(seed)
        items = call_user(self.module.get_inputs, "get_inputs()", self.path)
        return list(items)


def _nbytes(shape, dtype):
    n = 1
    for d in shape:
        n *= d
    return n * torch.empty((), dtype=getattr(torch, dtype)).element_size()


def nbytes(shape, dtype):
    return _nbytes(shape, dtype)


def lift_tensor_attributes(model, path):
    """Registers the plain tensor attributes that forward can read as buffers, in place.

    A tensor kept as a plain attribute (`self.hidden = torch.randn(...)` in __init__) is not
    state that torch.export lifts: read in forward it is baked into the package, and reassigned
    in forward (`self.hidden = ...`) it leaks the trace's fake tensors into the model. As a
    buffer it is an input of the task like any other state, holding the value __init__ gave it.
    An attribute of a class defined in the reference file is lifted only when that file reads an
    attribute of its name outside `__init__` (an unused `self.h0` stays out of the task, and out
    of the way of an input named h0); one of a class from elsewhere is always lifted.
    Returns the lifted names (module paths).
    """
    read = None
    lifted = []
    for prefix, mod in model.named_modules():
        for key, value in list(vars(mod).items()):
            if not isinstance(value, torch.Tensor):
                continue
            if type(mod).__module__ == model.__class__.__module__:
                if read is None:
                    read = _names_read_outside_init(path)
                if key not in read:
                    continue
            del mod.__dict__[key]
            mod.register_buffer(key, value.detach())
            lifted.append(f"{prefix}.{key}" if prefix else key)
    return lifted


def _names_read_outside_init(path):
    """Attribute names read (`x.name`, `x.name += 1`, `getattr(x, "name")`) in the file outside
    `__init__` bodies; any string constant counts, to err on the side of lifting."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    names = set()

    def visit(node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "__init__":
            return
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            names.add(node.attr)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Attribute):
            names.add(node.target.attr)  # `self.x += 1` reads self.x
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.add(node.value)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return names


class FreshState:
    """Puts back every submodule's attributes on exit, so that attributes forward assigns (its
    own state, `self.hidden = ...`) do not carry over: each call sees the model as __init__ left
    it, as KernelBench's single call on a fresh model does."""

    def __init__(self, model):
        self.saved = [(mod, dict(vars(mod))) for mod in model.modules()]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for mod, attrs in self.saved:
            for key in [k for k in vars(mod) if k not in attrs]:
                del mod.__dict__[key]
            mod.__dict__.update(attrs)
        return False


def make_model(module, path, seed):
    torch.manual_seed(seed)
    init = call_user(getattr(module, "get_init_inputs", lambda: []), "get_init_inputs()", path)
    if not isinstance(init, (list, tuple)):
        raise TaskError(f"{path}: get_init_inputs() must return a list")
    model = call_user(lambda: module.Model(*init), "Model(*get_init_inputs())", path)
    if not isinstance(model, torch.nn.Module):
        raise TaskError(f"{path}: Model is not a torch.nn.Module")
    return model
