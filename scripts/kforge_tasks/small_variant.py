"""A second, smaller, odd-sized variant for a problem whose sizes are module-level integers.

KernelBench problems come in one size, so a kernel that hard-codes it (a literal 393216, no bounds
check) would pass. The import derives a variant `small` in which every size symbol (an integer that
is a dimension of some input and whose change leaves the parameters' shapes) becomes a smaller odd
number, so the candidate
is also judged where its grid does not divide evenly and its literals are wrong. When the shapes
cannot be written over the symbols with every size changed, only the leading (batch) size changes.
docs/tasks.md, "Variants".
"""

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from . import program

NAME = "small"
SMALL_INPUT_BYTES = 4 << 20  # the variant's inputs together, at most, when some factor gets there
MAX_INPUT_BYTES = 16 << 20  # else the smallest reachable, up to this
MIN_SIZE = 5  # sizes below this stay (kernel widths, channel counts of 3)


def _odd_below(value, factor):
    n = max(3, value // factor)
    n -= 1 - n % 2  # odd
    while n >= value:
        n -= 2
    return n


def _param_shapes(path, symbols):
    """Shapes of the model's parameters and buffers under `symbols`, built on fake tensors (nothing
    allocated), or None when the model cannot be built so."""
    try:
        module = program.load(path, symbols)
        with FakeTensorMode(allow_non_fake_inputs=True):
            model = program.make_model(module, path, 0)
            return [tuple(t.shape) for _, t in list(model.named_parameters()) + list(model.named_buffers())]
    except Exception:  # a model that computes in __init__: judged by values below
        return None


def size_symbols(declared, probe, param_shapes, path=None):
    """Symbols that size an input and no parameter, largest first. With `path`, a symbol whose value
    happens to equal a parameter's dimension still counts when the parameters keep their shapes
    with it changed (built on fake tensors)."""
    input_dims = {d for _, _, shape, _, _ in probe.tensors for d in shape}
    param_dims = {d for shape in param_shapes for d in shape}
    syms = []
    for s, v in declared.items():
        if v < MIN_SIZE or v not in input_dims:
            continue
        if v in param_dims:
            if path is None:
                continue
            changed = _param_shapes(path, {**declared, s: _odd_below(v, 2)})
            if changed is None or changed != [tuple(p) for p in param_shapes]:
                continue
        syms.append(s)
    return sorted(syms, key=lambda s: -declared[s])


def leading_symbol(declared, probe, candidates):
    """The symbol sizing dim 0 of the first input, when it is one of `candidates`."""
    if not probe.tensors or not probe.tensors[0][2]:
        return None
    first = probe.tensors[0][2][0]
    hits = [s for s in candidates if declared[s] == first]
    return hits[0] if len(hits) == 1 else None


def shrink(path, declared, symbols):
    """{symbol: smaller odd value} for `symbols` such that the inputs take at most
    SMALL_INPUT_BYTES, or None when no factor gets there."""
    factor, best = 2, None
    while factor <= 1 << 24:
        overrides = {s: _odd_below(declared[s], factor) for s in symbols}
        probe = program.Probe(program.load(path, {**declared, **overrides}), path)
        if probe.bytes <= SMALL_INPUT_BYTES:
            return overrides
        if probe.bytes <= MAX_INPUT_BYTES:
            best = overrides
        factor *= 2
    return best


def plans(path, declared, probe, param_shapes):
    """The symbol sets to try, in order: every size symbol, then the leading one alone."""
    every = size_symbols(declared, probe, param_shapes, path)
    out = [every] if every else []
    lead = leading_symbol(declared, probe, every)
    if lead and every != [lead]:
        out.append([lead])
    return out
