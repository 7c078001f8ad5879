#!/usr/bin/env python3
"""Lists the library's C++ functions longer than a limit, and its files longer than another.

    scripts/function_lengths.py [--max-lines 100] [--max-file-lines 800] [--top K] [PATH...]

PATHs are files or folders (searched for .cpp/.hpp/.h/.cc/.cu files); without any, the
library: core/src, core/include, backends, mpi, python/src and tools (kernels/ holds GPU
kernels, which the length rule excepts; tests, benches and studies are not library code).
Paths are taken relative to the repository root (the parent of this script's folder).

A function is a body at namespace or class scope (free functions, member functions defined in
or out of their class, constructors); a lambda or local class counts as part of the function
around it. Its length runs from the first line of its declarator (after any template<...>
prefix) to its closing brace, both included. The scan is lexical (comments, strings, raw
strings, character literals and preprocessor lines removed, then braces matched): it needs no
compiler flags and reads code that does not build on this machine (CUDA, HIP).

Prints one line per function over --max-lines, longest first ("path:line: name: N lines"),
then one per file over --max-file-lines; with --top K, the K longest functions whatever their
length. Exits 1 when anything is over a limit, so CI can run it as a check.
"""
import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBRARY = ["core/src", "core/include", "backends", "mpi", "stores", "python/src", "tools"]
EXTENSIONS = (".cpp", ".cc", ".cxx", ".hpp", ".hh", ".hxx", ".h", ".cu", ".cuh", ".inl")
CONTROL = {"if", "for", "while", "switch", "catch", "return", "sizeof", "alignof", "decltype",
           "alignas", "noexcept", "__attribute__", "__declspec", "static_assert", "requires"}


def strip_code(text):
    """The text with comments, literals and preprocessor lines blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if line_start and c == "#":  # a preprocessor line, with its continuations
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append("\n")
                    i += 2
                    continue
                i += 1
            continue
        line_start = c == "\n"
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("\n" * text.count("\n", i, end))
            i = end
            continue
        raw = re.match(r'(?:u8|u|U|L)?R"([^()\\ ]{0,16})\(', text[i:i + 24])
        if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            close = ")" + raw.group(1) + '"'
            end = text.find(close, i + raw.end())
            end = n if end < 0 else end + len(close)
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
            continue
        # A quote after a digit or letter is a digit separator (1'000), not a literal.
        if c == '"' or (c == "'" and not (i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_"))):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def drop_template_prefix(head):
    """`head` without leading template<...> clauses and [[attributes]]."""
    while True:
        head = head.lstrip()
        if head.startswith("[["):
            end = head.find("]]")
            head = head[end + 2:] if end >= 0 else ""
            continue
        m = re.match(r"template\s*<", head)
        if not m:
            return head
        depth, j = 1, m.end()
        while j < len(head) and depth:
            depth += {"<": 1, ">": -1}.get(head[j], 0)
            j += 1
        head = head[j:]


def top_level(head):
    """(position, char) of each character of `head` outside (), [] and <> of templates."""
    depth = 0
    for j, ch in enumerate(head):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        yield j, ch, depth


def classify(head):
    """What a `{` opens, from the text since the previous statement or brace at its scope:
    ('scope', None) for a namespace, class or extern block, ('function', name),
    ('init', None) for braces inside a declarator (a member's brace initialiser in a
    constructor's initialiser list, a default argument `= {}`: the head continues after them),
    or ('other', None)."""
    h = drop_template_prefix(head)
    first = re.match(r"[A-Za-z_]\w*", h)
    word = first.group(0) if first else ""
    if word in ("namespace", "class", "struct", "union") or re.fullmatch(r'extern\s*""\s*', h):
        return ("scope", None)
    if word in ("enum", "typedef", "using") or word in CONTROL:
        return ("other", None)
    # The declarator's parameter list: the first top-level '(' after a name or operator.
    paren = None
    for j, ch, depth in top_level(h):
        if ch == "=" and depth == 0 and paren is None and not re.search(r"operator\s*\S*$", h[:j]):
            return ("other", None)  # an initialiser: `x = {`, `kTable[] = {`
        if ch == "(" and depth == 1 and paren is None:
            name = re.search(r"((?:[A-Za-z_]\w*\s*(?:<[^()]*>)?\s*::\s*)*~?(?:operator\s*(?:\(\)|[^\s(]+)|[A-Za-z_]\w*))\s*$", h[:j])
            if name and name.group(1).split("::")[-1].strip() not in CONTROL:
                paren = (j, re.sub(r"\s+", "", name.group(1)))
    if sum({"(": 1, ")": -1}.get(ch, 0) for ch in h) > 0:
        return ("init", None)  # a default argument `= {}` inside a parameter list
    if paren is None:
        return ("other", None)
    # Past its closing ')': qualifiers, a trailing return type, or a constructor's initialisers.
    depth, j = 0, paren[0]
    while j < len(h):
        depth += {"(": 1, ")": -1}.get(h[j], 0)
        j += 1
        if depth == 0:
            break
    tail = h[j:]
    init = re.search(r"(?<!:):(?!:)", tail)
    if init and not tail.rstrip().endswith((")", "}")):
        return ("init", None)  # `Foo() : a_(1), b_{` : b_'s braces, not the body
    return ("function", paren[1])


def functions(path):
    """(name, first line, line count) of each function defined in `path`."""
    with open(path, encoding="utf-8", errors="replace") as f:
        code = strip_code(f.read())
    found = []
    # Each open scope: its kind, and for a function its name and first line.
    stack = []
    head_start = 0
    i, n = 0, len(code)
    while i < n:
        c = code[i]
        in_body = any(kind != "scope" for kind, *_ in stack)
        if c in ";}" or (c == "{" and in_body):
            if c == "{":
                stack.append(("other",))
            elif c == "}" and stack:
                kind, *rest = stack.pop()
                if kind == "function":
                    name, first = rest
                    last = code.count("\n", 0, i) + 1
                    found.append((name, first, last - first + 1))
            head_start = i + 1
        elif c == "{":
            head = code[head_start:i]
            kind, name = classify(head)
            if kind == "init":  # skip the member's braces; the head goes on
                depth = 0
                while i < n:
                    depth += {"{": 1, "}": -1}.get(code[i], 0)
                    if depth == 0:
                        break
                    i += 1
            elif kind == "function":
                body = drop_template_prefix(head)
                offset = head_start + (len(head) - len(body))
                first = code.count("\n", 0, offset) + 1
                stack.append(("function", name, first))
                head_start = i + 1
            else:
                stack.append((kind,))
                head_start = i + 1
        elif c == ":" and not in_body and code.startswith(":", i + 1) is False and \
                (i == 0 or code[i - 1] != ":") and \
                re.search(r"\b(public|private|protected)\s*$", code[head_start:i]):
            head_start = i + 1  # an access specifier ends a head
        i += 1
    return found


def sources(paths):
    for p in paths:
        full = os.path.join(ROOT, p) if not os.path.isabs(p) else p
        if os.path.isfile(full):
            yield full
            continue
        for dirpath, dirnames, filenames in os.walk(full):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(EXTENSIONS):
                    yield os.path.join(dirpath, name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="*", help="files or folders (default: the library)")
    ap.add_argument("--max-lines", type=int, default=100, help="longest function allowed")
    ap.add_argument("--max-file-lines", type=int, default=800, help="longest file allowed")
    ap.add_argument("--top", type=int, default=0, help="also list the K longest functions")
    args = ap.parse_args()

    rows, long_files = [], []
    for path in sources(args.paths or LIBRARY):
        rel = os.path.relpath(path, ROOT)
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = sum(1 for _ in f)
        if lines > args.max_file_lines:
            long_files.append((lines, rel))
        rows += [(length, rel, first, name) for name, first, length in functions(path)]
    rows.sort(key=lambda r: (-r[0], r[1], r[2]))
    over = [r for r in rows if r[0] > args.max_lines]
    print(f"functions over {args.max_lines} lines: {len(over)}")
    for length, rel, first, name in over:
        print(f"  {rel}:{first}: {name}: {length} lines")
    print(f"files over {args.max_file_lines} lines: {len(long_files)}")
    for lines, rel in sorted(long_files, reverse=True):
        print(f"  {rel}: {lines} lines")
    if args.top:
        print(f"longest {args.top} functions:")
        for length, rel, first, name in rows[:args.top]:
            print(f"  {rel}:{first}: {name}: {length} lines")
    return 1 if over or long_files else 0


if __name__ == "__main__":
    sys.exit(main())
