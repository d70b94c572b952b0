"""Learns how get_inputs() draws each tensor, to fill TensorSpec.init (docs/formats.md).

A TorchFunctionMode tags tensors returned by torch's factory functions (rand, randn, randint,
ones, zeros, full, ...) and follows the tag through dtype casts, shape-only ops and affine
arithmetic with Python numbers (`torch.rand(n) * 2 - 1` -> rand, scale 2, shift -1). Any other op
on a tagged tensor gives an inexact tag that keeps the base family; the exporter then fits
scale/shift from observed values when the inputs were small enough to materialise.
"""

import torch
from torch.overrides import TorchFunctionMode

_FACTORIES = {
    torch.rand: "rand", torch.rand_like: "rand",
    torch.randn: "randn", torch.randn_like: "randn",
    torch.randint: "randint", torch.randint_like: "randint",
    torch.ones: "ones", torch.ones_like: "ones",
    torch.zeros: "zeros", torch.zeros_like: "zeros",
    torch.empty: "zeros", torch.empty_like: "zeros",
    torch.full: "full", torch.full_like: "full",
}
_SAME_VALUES = {
    "float", "double", "half", "bfloat16", "long", "int", "bool", "byte", "char", "to", "type",
    "contiguous", "clone", "detach", "reshape", "view", "permute", "transpose", "t", "flatten",
    "unsqueeze", "squeeze", "requires_grad_", "cpu", "cuda", "expand", "repeat", "mT",
}
_AFFINE = {"mul", "__mul__", "__rmul__", "add", "__add__", "__radd__", "sub", "__sub__",
           "__rsub__", "div", "__truediv__", "neg", "__neg__"}


STRUCTURES = ("lower", "upper", "symmetric")
_TRIANGLES = {"tril": "lower", "triu": "upper"}


def _name(func):
    return getattr(func, "__name__", "") or getattr(getattr(func, "__func__", None), "__name__", "")


def _factory_tag(func, args, kwargs):
    kind = _FACTORIES[func]
    if kind == "randint":
        ints = [a for a in args if isinstance(a, int) and not isinstance(a, bool)]
        if func is torch.randint_like:
            ints = [a for a in args[1:] if isinstance(a, int)]
        low = kwargs.get("low", 0)
        high = kwargs.get("high")
        if high is None:
            if len(ints) >= 2:
                low, high = ints[0], ints[1]
            elif len(ints) == 1:
                high = ints[0]
        if high is None:
            return {"dist": "randint", "exact": False}
        return {"dist": "randint", "low": int(low), "high": int(high), "exact": True}
    if kind == "full":
        value = kwargs.get("fill_value", args[1] if len(args) > 1 else None)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return {"dist": "ones", "scale": float(value), "exact": True}
        return {"dist": "ones", "exact": False}
    return {"dist": kind, "exact": func not in (torch.empty, torch.empty_like)}


def _affine(tag, name, args):
    """Returns the tag after `x op number`, or None when the op is not affine in x (a shift after a
    random factor included: the factor multiplies the shift before it, never one after it)."""
    if "factor" in tag and name in ("add", "__add__", "__radd__", "sub", "__sub__", "__rsub__"):
        return None
    if name in ("neg", "__neg__"):
        other = None
    else:
        others = [a for a in args[1:] if not isinstance(a, torch.Tensor)]
        if len(args) != 2 or len(others) != 1:
            return None
        other = others[0]
        if isinstance(other, bool) or not isinstance(other, (int, float)):
            return None
    scale, shift = tag.get("scale", 1.0), tag.get("shift", 0.0)
    if name in ("neg", "__neg__"):
        scale, shift = -scale, -shift
    elif name in ("mul", "__mul__", "__rmul__"):
        scale, shift = scale * other, shift * other
    elif name in ("add", "__add__", "__radd__"):
        shift = shift + other
    elif name in ("sub", "__sub__"):
        shift = shift - other
    elif name == "__rsub__":
        scale, shift = -scale, other - shift
    elif name in ("div", "__truediv__"):
        if other == 0:
            return None
        scale, shift = scale / other, shift / other
    out = dict(tag)
    out["scale"], out["shift"] = float(scale), float(shift)
    return out


def _random_factor(tracker, name, args):
    """The tag of `x * s` where s is a 0-dim exact rand draw (KernelBench's `torch.rand(n) * torch.rand(())`):
    x's exact tag with a factor drawn per input draw from s's interval. None for anything else."""
    if name not in ("mul", "__mul__", "__rmul__") or len(args) != 2:
        return None
    if not all(isinstance(a, torch.Tensor) and id(a) in tracker._tags for a in args):
        return None
    for x, s in (args, args[::-1]):
        x_tag, s_tag = tracker._tags[id(x)], tracker._tags[id(s)]
        if s.dim() != 0 or x.dim() == 0 or s_tag.get("dist") != "rand" or not s_tag.get("exact"):
            continue
        if not x_tag.get("exact") or "factor" in x_tag or not x.is_floating_point():
            return None
        low, high = s_tag.get("shift", 0.0), s_tag.get("shift", 0.0) + s_tag.get("scale", 1.0)
        if not low < high:
            return None
        return dict(x_tag, factor={"low": _number(low), "high": _number(high)})
    return None


class InitTracker(TorchFunctionMode):
    """Tags tensors created inside the mode; tag_of(t) gives the init description."""

    def __init__(self):
        super().__init__()
        self._tags = {}
        self._keep = []

    def _set(self, t, tag):
        if isinstance(t, torch.Tensor):
            self._tags[id(t)] = tag
            self._keep.append(t)

    def tag_of(self, t):
        return self._tags.get(id(t))

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if func in _FACTORIES:
            self._set(out, _factory_tag(func, args, kwargs))
            return out
        tagged = [self._tags[id(a)] for a in args if isinstance(a, torch.Tensor) and id(a) in self._tags]
        if not tagged or not isinstance(out, torch.Tensor):
            return out
        name = _name(func)
        factor = _random_factor(self, name, args)
        triangle = _triangle(name, args, kwargs)
        if triangle and id(args[0]) in self._tags:
            self._set(out, dict(self._tags[id(args[0])], structure=triangle))
        elif factor is not None:
            self._set(out, factor)
        elif name in _SAME_VALUES or name == "__get__":
            self._set(out, tagged[0])
        elif name in _AFFINE and len(tagged) == 1 and isinstance(args[0], torch.Tensor) and id(args[0]) in self._tags:
            self._set(out, _affine(tagged[0], name, args) or dict(tagged[0], exact=False))
        elif name in _AFFINE and len(tagged) == 1 and name in ("__radd__", "__rmul__", "mul", "add"):
            self._set(out, _affine(tagged[0], name, (args[1], args[0])) or dict(tagged[0], exact=False))
        else:
            self._set(out, dict(tagged[0], exact=False))
        return out


def _triangle(name, args, kwargs):
    """"lower" or "upper" for `torch.tril(x)` / `x.triu()` on the diagonal of a square matrix, else None."""
    if name not in _TRIANGLES or not args or not isinstance(args[0], torch.Tensor):
        return None
    diagonal = args[1] if len(args) > 1 else kwargs.get("diagonal", 0)
    x = args[0]
    if diagonal != 0 or x.dim() < 2 or x.shape[-1] != x.shape[-2]:
        return None
    return _TRIANGLES[name]


def structure_of(t):
    """The structure get_inputs gave a real input, seen in its values: "lower" (zero above the diagonal,
    not below), "upper", "symmetric", or None. A dense draw never shows one by chance."""
    if not isinstance(t, torch.Tensor) or not t.is_floating_point() or t.dim() < 2:
        return None
    if t.shape[-1] != t.shape[-2] or t.shape[-1] < 2 or t.numel() == 0:
        return None
    below, above = t.tril(-1) != 0, t.triu(1) != 0
    if below.any() and not above.any():
        return "lower"
    if above.any() and not below.any():
        return "upper"
    if below.any() and torch.equal(t, t.mT):
        return "symmetric"
    return None


def _number(v):
    v = float(v)
    return int(v) if v.is_integer() and abs(v) < 2**53 else v


def init_spec(tag, observed=None):
    """TensorSpec.init for a tag; observed = (min, max, mean, std) of the real tensor or None.

    Returns (init, exact): exact is False when the description is an approximation.
    """
    if tag is None:
        tag = {"dist": "rand", "exact": False}
    exact = tag.get("exact", False)
    dist = tag["dist"]
    if exact or observed is None:
        init = {"dist": dist}
        for key in ("low", "high"):
            if key in tag:
                init[key] = tag[key]
        if tag.get("scale", 1.0) != 1.0:
            init["scale"] = _number(tag["scale"])
        if tag.get("shift", 0.0) != 0.0:
            init["shift"] = _number(tag["shift"])
        if "factor" in tag:
            init["factor"] = dict(tag["factor"])
        return init, exact
    init = _fitted(dist, observed)
    # A draw that went through a random factor keeps one, even fitted: without it every draw of a large
    # input has the same statistics (`(torch.rand(n) * torch.rand(())).softmax(-1)`).
    if "factor" in tag and init["dist"] not in ("zeros", "randint"):
        init["factor"] = dict(tag["factor"])
    return init, False


def _fitted(dist, observed):
    """An init of the tag's family fitted to the (min, max, mean, std) of one observed draw."""
    lo, hi, mean, std = observed
    if lo == hi:
        if lo == 0:
            return {"dist": "zeros"}
        return {"dist": "ones", "scale": _number(lo)}
    if dist == "randint":
        return {"dist": "randint", "low": int(lo), "high": int(hi) + 1}
    if dist == "randn":
        return {"dist": "randn", "scale": _number(std), "shift": _number(mean)}
    init = {"dist": "rand", "scale": _number(hi - lo)}
    if lo != 0:
        init["shift"] = _number(lo)
    return init
