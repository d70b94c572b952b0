"""A second, smaller, odd-sized variant for a problem whose sizes are module-level integers.

KernelBench problems come in one size, so a kernel that hard-codes it (a literal 393216, no bounds
check) would pass. The import derives a variant `small` in which every size symbol (an integer that
is a dimension of some input and of no parameter) becomes a smaller odd number, so the candidate
is also judged where its grid does not divide evenly and its literals are wrong. When the shapes
cannot be written over the symbols with every size changed, only the leading (batch) size changes.
docs/tasks.md, "Variants".
"""

from . import program

NAME = "small"
SMALL_INPUT_BYTES = 4 << 20  # the variant's inputs together, at most
MIN_SIZE = 5  # sizes below this stay (kernel widths, channel counts of 3)


def _odd_below(value, factor):
    n = max(3, value // factor)
    n -= 1 - n % 2  # odd
    while n >= value:
        n -= 2
    return n


def size_symbols(declared, probe, param_shapes):
    """Symbols that size an input and no parameter, largest first."""
    input_dims = {d for _, _, shape, _, _ in probe.tensors for d in shape}
    param_dims = {d for shape in param_shapes for d in shape}
    syms = [s for s, v in declared.items() if v >= MIN_SIZE and v in input_dims and v not in param_dims]
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
    factor = 2
    while factor <= 1 << 24:
        overrides = {s: _odd_below(declared[s], factor) for s in symbols}
        probe = program.Probe(program.load(path, {**declared, **overrides}), path)
        if probe.bytes <= SMALL_INPUT_BYTES:
            return overrides
        factor *= 2
    return None


def plans(path, declared, probe, param_shapes):
    """The symbol sets to try, in order: every size symbol, then the leading one alone."""
    every = size_symbols(declared, probe, param_shapes)
    out = [every] if every else []
    lead = leading_symbol(declared, probe, every)
    if lead and every != [lead]:
        out.append([lead])
    return out
