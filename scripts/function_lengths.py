#!/usr/bin/env python3
"""Lists the C++ function definitions under src/ whose bodies are longer than N lines, longest first.

    scripts/function_lengths.py [--max N] [--count] [ROOT ...]

A body's length counts its lines from the opening brace to the closing one, both included (with
--code-only, leaving out blank lines and lines that hold only a comment). Function bodies are found by their braces: a brace at namespace or class
level that follows a closing parenthesis (and qualifiers, an initializer list or a return type) opens
one; lambdas and local classes count as part of the function around them. Exits 0; --fail exits 1 when
a function is over the limit.
"""
import argparse
import os
import re
import sys

SOURCE_EXTS = (".cc", ".cpp", ".h", ".hpp", ".cu", ".cuh")
CONTAINER = re.compile(r"\b(namespace|class|struct|union|enum|extern)\b[^;{}()]*$")
NAME = re.compile(r"([A-Za-z_~][\w:~<>,\s*&]*?(?:operator\s*\S+?)?)\s*\($")


def strip(text):
    """Blanks comments, string and character literals, keeping every newline in place."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i)
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2 : j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum():
                out.append(c)  # a digit separator (1'000)
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else text[i:j])
            i = j
        elif c == "#" and (i == 0 or text[i - 1] == "\n"):  # a preprocessor line (and its continuations)
            j = i
            while True:
                k = text.find("\n", j)
                if k < 0:
                    k = n
                    break
                if text[k - 1] != "\\":
                    break
                j = k + 1
            out.append(re.sub(r"[^\n]", " ", text[i:k]))
            i = k
        else:
            out.append(c)
            i += 1
    return "".join(out)


def counted_lines(original_lines, first, last, code_only):
    """Lines first..last (0-based, inclusive); with code_only, those that hold code."""
    if not code_only:
        return last - first + 1
    return sum(1 for line in original_lines[first : last + 1] if line.strip() and not line.strip().startswith("//"))


def function_name(head):
    """The name before the parameter list that `head` (the code before a body's brace) ends with."""
    depth = 0
    for i in range(len(head) - 1, -1, -1):
        if head[i] == ")":
            depth += 1
        elif head[i] == "(":
            depth -= 1
            if depth == 0:
                m = re.search(r"([\w:~]+(?:operator\s*[^\s(]+)?)\s*$", head[:i])
                if m:
                    return m.group(1)
    return "?"


def is_function_head(head):
    """Whether the code before a brace at namespace or class level ends a function's signature."""
    h = head.rstrip()
    if not h:
        return False
    # Trailing qualifiers, a trailing return type, or a constructor's initializer list.
    h = re.sub(r"(\b(const|override|final|noexcept|mutable|volatile|try)\b|&&?|\s)+$", "", h)
    if h.endswith(")"):
        return True
    if re.search(r"\)\s*(const\s*)?(noexcept\s*)?->\s*[\w:<>,\s*&]+$", h):
        return True
    return False


def scan(path, code_only=False):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    original_lines = text.split("\n")
    code = strip(text)
    results = []
    stack = []  # ("container" | "function" | "block", start offset)
    head_start = 0  # where the text before the next brace at container level starts
    line = 0
    func_start_line = None
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        if c == ";" and all(kind == "container" for kind, _ in stack):
            head_start = i + 1
        elif c == "{":
            if all(kind == "container" for kind, _ in stack):
                head = code[head_start:i]
                if CONTAINER.search(head) and not is_function_head(head):
                    stack.append(("container", i))
                elif is_function_head(head):
                    stack.append(("function", i))
                    func_start_line = line
                    func_name = function_name(head)
                else:
                    stack.append(("block", i))  # an initializer, an array
            else:
                stack.append(("block", i))
        elif c == "}":
            if not stack:
                continue
            kind, _ = stack.pop()
            if kind == "function":
                results.append((counted_lines(original_lines, func_start_line, line, code_only), func_name, func_start_line + 1))
            # A brace-initializer in a signature (a default argument `= {}`) stays part of the head.
            if kind != "block" and all(k == "container" for k, _ in stack):
                head_start = i + 1
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", nargs="*", default=["src"])
    parser.add_argument("--max", type=int, default=80, help="print the functions longer than this (default 80)")
    parser.add_argument("--count", action="store_true", help="print only how many are over, per root")
    parser.add_argument("--code-only", action="store_true", help="count only lines that hold code")
    parser.add_argument("--fail", action="store_true", help="exit 1 when any function is over")
    args = parser.parse_args()
    over = []
    for root in args.roots:
        files = [root] if os.path.isfile(root) else [
            os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(SOURCE_EXTS)]
        for path in sorted(files):
            for length, name, start in scan(path, args.code_only):
                if length > args.max:
                    over.append((length, path, start, name))
    over.sort(key=lambda r: (-r[0], r[1], r[2]))
    if not args.count:
        for length, path, start, name in over:
            print(f"{length:5d}  {path}:{start}  {name}")
    print(f"{len(over)} function{'s' if len(over) != 1 else ''} over {args.max} lines")
    return 1 if args.fail and over else 0


if __name__ == "__main__":
    sys.exit(main())
