"""Costs derived at import: FLOPs and compulsory bytes as expressions over the task's symbols.

Every variant's reference runs once on fake tensors (nothing allocated) under torch's
FlopCounterMode, whose formulas are extended by cost_ops for the ops it counts as zero. Each
counted op is recorded with its shapes; the shapes' sizes are written over the symbols by fitting
them across the variants (as shapes.infer does for tensors), the op's formula is evaluated again on
those symbolic sizes, and the sum is checked against the counter's own total in every variant.
Bytes are the inputs, parameters and buffers read once plus the outputs written once. When some
size cannot be written over the symbols, or the ops differ between variants, no cost is written
and a note says why (docs/tasks.md, "Derived costs").
"""

import contextlib
import itertools
from dataclasses import dataclass, field

import sympy
import torch
from torch._dispatch.python import enable_python_dispatcher
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.utils._pytree import tree_flatten, tree_map, tree_unflatten
from torch.utils.flop_counter import FlopCounterMode, shape_wrapper

from . import cost_ops, expr, rnn_shapes, shapes

VERSION = "torch-flop-counter/1"


class _Shape(tuple):
    """A tensor's sizes in a recorded op (told apart from int lists such as kernel sizes)."""


@dataclass
class Trace:
    """One variant's run: counted ops as (packet, args, kwargs, out) with tensors as _Shape,
    its tensors read or written once as (shape, dtype), the counter's total, uncounted op names."""
    ops: list = field(default_factory=list)
    io: list = field(default_factory=list)
    flops: int = 0
    uncounted: set = field(default_factory=set)


def _signature(tree):
    return tree_map(lambda x: _Shape(int(d) for d in x.shape) if isinstance(x, torch.Tensor) else x, tree)


class _Counter(FlopCounterMode):
    """torch's FlopCounterMode with cost_ops' formulas for the ops it does not know, recording
    every op that costs something."""

    def __init__(self):
        super().__init__(display=False)
        self.trace = Trace()

    def formula(self, packet):
        if packet in self.flop_registry:
            return self.flop_registry[packet]
        extra, counted = cost_ops.formula_for(packet)
        return shape_wrapper(extra) if counted else None

    def _count_flops(self, func_packet, out, args, kwargs):
        formula = self.formula(func_packet)
        if formula is None:
            self.trace.uncounted.add(str(func_packet))
            return out
        flops = formula(*args, **kwargs, out_val=out)
        if flops:
            self.flop_counts["Global"][func_packet] += flops
            self.trace.ops.append((func_packet, _signature(args), _signature(kwargs), _signature(out)))
        return out


@contextlib.contextmanager
def _counted_rnns(counter):
    """Within (inside rnn_shapes.fake_rnn_shapes): the RNN ops whose outputs rnn_shapes gives
    directly, which the counter's dispatch mode never sees, are counted as one op each."""
    key = rnn_shapes._KEY
    saved = {op: op.py_kernels.get(key) for op in rnn_shapes.GATES}
    for op, kernel in saved.items():
        if kernel is None:
            continue

        def counted(*args, _op=op, _kernel=kernel, **kwargs):
            out = _kernel(*args, **kwargs)
            if len(args) == 9 and not kwargs:  # the direct path; otherwise the decomposition's ops count
                input, hx, params, has_biases, num_layers, _, _, bidirectional, batch_first = args
                hiddens = list(hx) if _op is torch.ops.aten.lstm.input else [hx]
                if rnn_shapes._consistent(rnn_shapes.GATES[_op], input, hiddens, params, has_biases, num_layers,
                                          bidirectional, batch_first):
                    counter._count_flops(_op._overloadpacket, out, args, kwargs)
            return out

        op.py_kernels[key] = counted
        op._dispatch_cache.clear()
    try:
        yield
    finally:
        for op, kernel in saved.items():
            if kernel is not None:
                op.py_kernels[key] = kernel
                op._dispatch_cache.clear()


def trace(lifted, probe, state):
    """Trace of lifted(inputs..., state...) on fake CPU tensors. state: [(name, tensor)]."""
    mode = FakeTensorMode(allow_non_fake_inputs=True)
    with mode:
        args = [torch.empty(s, dtype=getattr(torch, d)) for _, _, s, d, _ in probe.tensors]
        args += [torch.empty_strided(t.shape, t.stride(), dtype=t.dtype) for _, t in state]
    counter = _Counter()
    # The Python dispatcher runs rnn_shapes' kernels, as torch.export does.
    with mode, enable_python_dispatcher(), rnn_shapes.fake_rnn_shapes(), _counted_rnns(counter), torch.no_grad(), \
            counter:
        outs = lifted(*args)
    t = counter.trace
    t.flops = counter.get_total_flops()
    t.io = [(tuple(a.shape), a.dtype) for a in args] + [(tuple(o.shape), o.dtype) for o in outs]
    return t


class _Fitter:
    """Writes sizes (one value per variant) as sympy expressions over the symbols."""

    def __init__(self, symtabs):
        self.symtabs = symtabs
        self.single = len(symtabs) == 1
        self.symbols = {s: sympy.Symbol(s, positive=True, integer=True) for s in symtabs[0]}
        self.atoms = {}  # sympy symbol -> expression text, for sizes with floor division
        self.unfitted = {}  # sympy symbol -> the values no expression fits; an error once a count uses one
        varying = [s for s in symtabs[0] if len({t[s] for t in symtabs}) > 1]
        self.varying = varying

    def size(self, values):
        text = shapes.infer_dim(values, self.symtabs, self.single)
        if text is None:
            text = self._monomial(values) or self._affine(values)
        if text is None:  # fine as long as no count depends on it
            same = [u for u, v in self.unfitted.items() if v == values]
            if same:  # the same size seen again (a bmm's two batch sizes)
                return same[0]
            symbol = sympy.Symbol(f"_u{len(self.unfitted)}", positive=True, integer=True)
            self.unfitted[symbol] = values
            return symbol
        if isinstance(text, int):
            return sympy.Integer(text)
        if any(op in text for op in "+-/%"):  # kept whole: "10 * B * (L - 4)", not expanded
            known = [a for a, t in self.atoms.items() if t == f"({text})"]
            if known:
                return known[0]
            atom = sympy.Symbol(f"_a{len(self.atoms)}", positive=True, integer=True)
            self.atoms[atom] = f"({text})"
            return atom
        return sympy.sympify(text, locals=self.symbols)

    def _monomial(self, values):
        for degree in (2, 3, 4):
            for combo in itertools.combinations_with_replacement(self.varying, degree):
                monos = [_prod(t[s] for s in combo) for t in self.symtabs]
                if monos[0] == 0 or values[0] % monos[0]:
                    continue
                c = values[0] // monos[0]
                if c >= 1 and all(m * c == v for m, v in zip(monos, values)):
                    return " * ".join(([str(c)] if c > 1 else []) + list(combo))
        return None

    def _affine(self, values):
        """(s + b) / c, as strided convolutions and pools give, or c * s + b, as transposed ones do;
        the simplest that fits (smallest c, then |b|), since two variants fit more than one."""
        fits = lambda fn: all(fn(t) == v for t, v in zip(self.symtabs, values))  # noqa: E731
        for c in range(2, 17):
            for b in sorted(range(-16, 17), key=abs):
                for s in self.varying:
                    if fits(lambda t: (t[s] + b) // c):
                        return f"({s} + {b}) / {c}" if b >= 0 else f"({s} - {-b}) / {c}"
        for c in range(1, 17):
            for b in sorted(range(-64, 65), key=abs):
                for s in self.varying:
                    if b and fits(lambda t: c * t[s] + b):
                        sign = "+" if b > 0 else "-"
                        return f"{c} * {s} {sign} {abs(b)}" if c > 1 else f"{s} {sign} {abs(b)}"
        return None


class CostError(ValueError):
    pass


def _prod(xs):
    out = 1
    for x in xs:
        out *= x
    return out


def _symbolic(fitter, trees):
    """One tree with every shape and varying int replaced by sympy sizes, from one tree per variant."""
    flat = [tree_flatten(t) for t in trees]
    spec = flat[0][1]
    if any(f[1] != spec or len(f[0]) != len(flat[0][0]) for f in flat):
        raise CostError("an op's arguments differ in structure between variants")
    leaves = []
    for per_variant in zip(*(f[0] for f in flat)):
        first = per_variant[0]
        if isinstance(first, _Shape):
            if any(not isinstance(x, _Shape) or len(x) != len(first) for x in per_variant):
                raise CostError("a tensor changes rank between variants")
            leaves.append(tuple(fitter.size([x[d] for x in per_variant]) for d in range(len(first))))
        elif isinstance(first, int) and not isinstance(first, bool) and len(set(per_variant)) > 1:
            leaves.append(fitter.size(list(per_variant)))
        else:
            leaves.append(first)
    return tree_unflatten(leaves, spec)


def _flops(fitter, traces):
    counter = _Counter()
    ops = [t.ops for t in traces]
    if len({len(o) for o in ops}) != 1 or any([p for p, *_ in o] != [p for p, *_ in ops[0]] for o in ops):
        raise CostError("the reference runs different ops in different variants")
    total = sympy.Integer(0)
    for i, (packet, *_rest) in enumerate(ops[0]):
        args, kwargs, out = _symbolic(fitter, [(o[i][1], o[i][2], o[i][3]) for o in ops])
        try:
            total += sympy.sympify(counter.formula(packet)(*args, **kwargs, out_val=out))
        except (AssertionError, TypeError, ValueError) as e:  # a formula that needs plain integers
            raise CostError(f"the formula of {packet} does not take symbolic sizes ({type(e).__name__})") from None
    return total


def _bytes(fitter, traces):
    if len({len(t.io) for t in traces}) != 1:
        raise CostError("the variants differ in their tensors")
    total = sympy.Integer(0)
    for i, (shape, dtype) in enumerate(traces[0].io):
        sizes = _symbolic(fitter, [_Shape(t.io[i][0]) for t in traces])
        total += torch.empty((), dtype=dtype).element_size() * _prod(sizes)
    return total


def _text(fitter, value):
    """kforge expression text of a polynomial with integer coefficients."""
    value = sympy.expand(value)
    for symbol, values in fitter.unfitted.items():
        if symbol in value.free_symbols:
            raise CostError(f"a size {values} (one per variant) cannot be written over the symbols")
    if value.is_Integer:
        return str(int(value))
    order = [fitter.symbols[s] for s in fitter.symtabs[0]] + list(fitter.atoms)
    gens = [g for g in order if g in value.free_symbols]
    if value.free_symbols - set(gens):
        raise CostError("the count uses something other than the symbols")
    poly = sympy.Poly(value, *gens)
    names = [fitter.atoms.get(g, str(g)) for g in gens]
    terms = sorted(poly.terms(), key=lambda t: -sum(t[0]))
    parts = []
    for monom, coeff in terms:
        if not coeff.is_Integer:
            raise CostError(f"the count has a non-integer coefficient {coeff}")
        c = int(coeff)
        factors = [n for n, k in zip(names, monom) for _ in range(k)]
        body = " * ".join(([str(abs(c))] if abs(c) != 1 or not factors else []) + factors)
        parts.append(("- " if c < 0 else "+ ") + body)
    text = " ".join(parts)
    return text[2:] if text.startswith("+ ") else "-" + text[2:]


def derive(traces, symtabs):
    """({flops, bytes, derived}, notes) from one trace per variant (symtabs in the same order),
    or (None, notes saying why none was written)."""
    fitter = _Fitter(symtabs)
    notes = []
    uncounted = sorted(set().union(*(t.uncounted for t in traces)))
    if uncounted:  # the flops would be a lower bound, the floor too low
        return None, [f"no derived cost: no FLOP convention for {', '.join(uncounted)}"]
    try:
        cost = {"flops": _text(fitter, _flops(fitter, traces)), "bytes": _text(fitter, _bytes(fitter, traces)),
                "derived": VERSION}
    except CostError as e:
        return None, [f"no derived cost: {e}"]
    for t, syms in zip(traces, symtabs):
        want = {"flops": t.flops, "bytes": sum(_nbytes(s, d) for s, d in t.io)}
        for key, value in want.items():
            got = expr.evaluate(cost[key], syms)
            if got != value:
                return None, [f"no derived cost: {key} '{cost[key]}' gives {got}, the counter {value}"]
    return cost, notes


def _nbytes(shape, dtype):
    return _prod(shape) * torch.empty((), dtype=dtype).element_size()
