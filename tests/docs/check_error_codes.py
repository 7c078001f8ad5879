#!/usr/bin/env python3
"""docs/troubleshooting.md has a section (a level-2 heading) for every tune::StatusCode in
core/include/tune/status.hpp but `ok`, and none for a code that no longer exists, so a new code
cannot ship without saying what it means and what to do."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def status_codes():
    text = (ROOT / "core/include/tune/status.hpp").read_text()
    body = re.search(r"enum class StatusCode[^{]*\{(.*?)\};", text, re.S).group(1)
    body = re.sub(r"//[^\n]*", "", body)
    return [m.group(1) for m in re.finditer(r"\b([a-z_]+)\b\s*(?:=\s*\d+\s*)?,?", body)
            if m.group(1) != "ok"]


def page_sections():
    text = (ROOT / "docs/troubleshooting.md").read_text()
    return re.findall(r"^## ([a-z_]+)\s*$", text, re.M)


def main():
    codes, sections = status_codes(), page_sections()
    missing = [c for c in codes if c not in sections]
    stale = [s for s in sections if s not in codes]
    for c in missing:
        print(f"docs/troubleshooting.md has no section '## {c}' (tune::StatusCode::{c})")
    for s in stale:
        print(f"docs/troubleshooting.md has a section '## {s}' but tune::StatusCode has no {s}")
    print(f"{len(codes)} status codes, {len(sections)} sections")
    return 1 if missing or stale or not codes else 0


if __name__ == "__main__":
    sys.exit(main())
