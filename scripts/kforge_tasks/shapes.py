"""Writes tensor shapes as expressions over task symbols, from their values in every variant."""

from .schema import TaskError

_SMALL = range(1, 17)


def _candidates(symtab_names):
    for s in symtab_names:
        yield s, lambda t, s=s: t[s]
    for i, s in enumerate(symtab_names):
        for u in symtab_names[i:]:
            yield f"{s} * {u}", lambda t, s=s, u=u: t[s] * t[u]
    for s in symtab_names:
        for c in range(2, 17):
            yield f"{s} * {c}", lambda t, s=s, c=c: t[s] * c
            yield f"{s} / {c}", lambda t, s=s, c=c: t[s] // c
        for c in _SMALL:
            yield f"{s} - {c}", lambda t, s=s, c=c: t[s] - c
            yield f"{s} + {c}", lambda t, s=s, c=c: t[s] + c


def infer_dim(values, symtabs, single):
    """Expression (str) or int for one dimension taking `values[k]` under `symtabs[k]`."""
    names = list(symtabs[0])
    if single:
        hits = [s for s in names if symtabs[0][s] == values[0]]
        return hits[0] if len(hits) == 1 and values[0] > 1 else values[0]
    constant = len(set(values)) == 1
    varying = [s for s in names if len({t[s] for t in symtabs}) > 1]
    for s in varying + [s for s in names if s not in varying]:
        if all(t[s] == v for t, v in zip(symtabs, values)) and (s in varying or not constant or values[0] > 1):
            return s
    if constant:
        return values[0]
    for text, fn in _candidates(varying):
        if all(fn(t) == v for t, v in zip(symtabs, values)):
            return text
    return None


def infer(name, shapes, symtabs, single):
    """[expr] for a tensor whose shape is shapes[k] under symtabs[k]."""
    ranks = {len(s) for s in shapes}
    if len(ranks) != 1:
        raise TaskError(f"tensor '{name}' changes rank between variants")
    out = []
    for d in range(len(shapes[0])):
        e = infer_dim([s[d] for s in shapes], symtabs, single)
        if e is None:
            raise TaskError(f"tensor '{name}': cannot write dim {d} ({[s[d] for s in shapes]}) over the symbols; "
                            "give its shape in task.json")
        out.append(e)
    return out
