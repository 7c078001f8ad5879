#!/usr/bin/env python3
"""Every `tune <command> [<subcommand>]` and every `--option` that docs/cli.md shows in its
command blocks exists in the tune program's sources (tools/: CLI11's add_subcommand, add_option
and add_flag), so a renamed or removed command or option cannot stay documented."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def registered():
    """(command names, option names) the tools register."""
    text = "\n".join(p.read_text() for p in sorted((ROOT / "tools").rglob("*.cpp")))
    commands = set(re.findall(r'add_subcommand\(\s*"([\w-]+)"', text))
    options = set(re.findall(r'add_(?:option|flag)\(\s*"(--[\w-]+)', text))
    options |= {"--help", "--version"}  # CLI11's own
    return commands, options


def documented():
    """(line, words after `tune`) of each command line in cli.md's sh blocks."""
    text = (ROOT / "docs" / "cli.md").read_text()
    out = []
    for block in re.finditer(r"```sh\n(.*?)```", text, re.S):
        start = text[: block.start()].count("\n") + 2
        for i, line in enumerate(block.group(1).splitlines()):
            line = line.split("#", 1)[0]
            if line.strip().startswith("tune "):
                out.append((start + i, line.split()[1:]))
    return out


def main():
    commands, options = registered()
    problems, checked = [], 0
    for n, words in documented():
        for w in re.findall(r"--[\w-]+", " ".join(words)):
            checked += 1
            if w not in options:
                problems.append(f"docs/cli.md:{n}: option {w} is not registered in tools/")
        for w in words[:2]:
            if re.fullmatch(r"[a-z][\w-]*", w) and not w.endswith((".json", ".db", ".html")):
                checked += 1
                if w not in commands:
                    problems.append(f"docs/cli.md:{n}: command '{w}' is not registered in tools/")
                if w not in ("cache",):
                    break  # only `tune cache` has subcommands
    for p in problems:
        print(p)
    print(f"{checked} commands and options checked, {len(problems)} unknown")
    return 1 if problems or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
