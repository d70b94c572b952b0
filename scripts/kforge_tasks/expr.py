"""Shape expressions (docs/formats.md, "Shape expressions"): parse and evaluate over symbols.

Only what task shapes and cost formulas need: integers, + - * / %, parentheses, unary minus,
cdiv/min/max and symbols. `numel`/`size` refer to tensors and are accepted by the parser but
cannot be evaluated here.
"""

import re

_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z0-9_]*)|(.))")
_INT64_MAX = 2**63 - 1


class ExprError(ValueError):
    pass


def _tokens(text):
    pos = 0
    out = []
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            break
        if m.group(1) is not None:
            out.append(("int", int(m.group(1)), m.start(1)))
        elif m.group(2) is not None:
            out.append(("name", m.group(2), m.start(2)))
        elif m.group(3) is not None and not m.group(3).isspace():
            out.append(("op", m.group(3), m.start(3)))
        pos = m.end()
    out.append(("end", None, len(text)))
    return out


class _Parser:
    def __init__(self, text, symbols):
        self.text = text
        self.toks = _tokens(text)
        self.i = 0
        self.symbols = symbols

    def fail(self, msg, pos=None):
        pos = self.toks[self.i][2] if pos is None else pos
        raise ExprError(f"expression '{self.text}' at {pos}: {msg}")

    def peek(self):
        return self.toks[self.i]

    def take(self, kind, value=None):
        tok = self.peek()
        if tok[0] != kind or (value is not None and tok[1] != value):
            self.fail(f"expected {value or kind}")
        self.i += 1
        return tok

    def check(self, v, pos):
        if not -_INT64_MAX - 1 <= v <= _INT64_MAX:
            self.fail("64-bit overflow", pos)
        return v

    def parse(self):
        v = self.sum()
        if self.peek()[0] != "end":
            self.fail("unexpected token")
        return v

    def sum(self):
        v = self.product()
        while self.peek()[0] == "op" and self.peek()[1] in "+-":
            op, pos = self.take("op")[1], self.toks[self.i - 1][2]
            r = self.product()
            v = self.check(v + r if op == "+" else v - r, pos)
        return v

    def product(self):
        v = self.unary()
        while self.peek()[0] == "op" and self.peek()[1] in "*/%":
            op, pos = self.take("op")[1], self.toks[self.i - 1][2]
            r = self.unary()
            if op == "*":
                v = self.check(v * r, pos)
            else:
                if r == 0:
                    self.fail("division by zero", pos)
                q = abs(v) // abs(r) * (1 if (v >= 0) == (r >= 0) else -1)
                v = q if op == "/" else v - q * r
        return v

    def unary(self):
        if self.peek()[0] == "op" and self.peek()[1] == "-":
            pos = self.take("op")[2]
            return self.check(-self.unary(), pos)
        return self.atom()

    def atom(self):
        kind, value, pos = self.peek()
        if kind == "int":
            self.i += 1
            return self.check(value, pos)
        if kind == "op" and value == "(":
            self.i += 1
            v = self.sum()
            self.take("op", ")")
            return v
        if kind == "name":
            self.i += 1
            if self.peek()[0] == "op" and self.peek()[1] == "(":
                self.i += 1
                args = [self.sum()]
                while self.peek()[0] == "op" and self.peek()[1] == ",":
                    self.i += 1
                    args.append(self.sum())
                self.take("op", ")")
                return self.call(value, args, pos)
            if value not in self.symbols:
                self.fail(f"unknown symbol '{value}'", pos)
            return self.symbols[value]
        self.fail("expected a number, symbol or '('")

    def call(self, name, args, pos):
        if name in ("cdiv", "min", "max"):
            if len(args) != 2:
                self.fail(f"{name} takes 2 arguments", pos)
            a, b = args
            if name == "min":
                return min(a, b)
            if name == "max":
                return max(a, b)
            if b == 0:
                self.fail("division by zero", pos)
            return -(-a // b)
        self.fail(f"unknown function '{name}' (only cdiv, min, max over symbols here)", pos)


def evaluate(text, symbols):
    """Evaluates an expression (str or int) over {name: int}; raises ExprError."""
    if isinstance(text, bool):
        raise ExprError(f"expression {text!r}: not an integer")
    if isinstance(text, int):
        return text
    if not isinstance(text, str):
        raise ExprError(f"expression {text!r}: not a string or integer")
    return _Parser(text, symbols).parse()


def names_in(text):
    """Symbol names an expression refers to (function names excluded)."""
    if isinstance(text, int):
        return set()
    toks = _tokens(text)
    return {
        t[1]
        for i, t in enumerate(toks)
        if t[0] == "name" and not (toks[i + 1][0] == "op" and toks[i + 1][1] == "(")
    }
