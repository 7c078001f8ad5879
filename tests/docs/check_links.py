#!/usr/bin/env python3
"""Every relative link and anchor in README.md and docs/**/*.md points at something that exists.

A link to a file must name an existing file or folder of the repository; a link with an
anchor (#section) must name a heading of the target page, and that heading's anchor must be
the same on GitHub and in the mkdocs site (they slugify differently: mkdocs collapses runs of
spaces and hyphens, GitHub does not), so a link works in both. External links (http:, mailto:)
are not fetched: CI has no network.
"""
import pathlib
import re
import sys
import unicodedata

ROOT = pathlib.Path(__file__).resolve().parents[2]
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*```")


def mkdocs_slug(text):
    # Python-Markdown's toc.slugify, which mkdocs uses.
    value = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    value = re.sub(r"[^\w\s-]", "", value).strip().lower()
    return re.sub(r"[-\s]+", "-", value)


def github_slug(text):
    value = text.strip().lower()
    value = re.sub(r"[^\w\- ]", "", value)
    return value.replace(" ", "-")


def heading_text(line):
    text = line.lstrip("#").strip()
    text = re.sub(r"`([^`]*)`", r"\1", text)  # code spans render as their text
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # so do links
    return text.replace("*", "")


def prose_lines(path):
    """(line number, line) outside code fences."""
    inside = False
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            yield n, line


def anchors(path):
    """mkdocs anchor -> GitHub anchor of each heading of a page."""
    out = {}
    for _, line in prose_lines(path):
        if re.match(r"^#{1,6} ", line):
            text = heading_text(line)
            out[mkdocs_slug(text)] = github_slug(text)
    return out


def check(path):
    problems = []
    rel = path.relative_to(ROOT)
    for n, line in prose_lines(path):
        line = re.sub(r"`[^`]*`", "", line)  # links inside code spans are not links
        for m in LINK.finditer(line):
            target = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue
            file_part, _, anchor = target.partition("#")
            dest = (path.parent / file_part).resolve() if file_part else path
            where = f"{rel}:{n}: link '{target}'"
            if not dest.exists():
                problems.append(f"{where}: no such file {dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest}")
                continue
            if not dest.is_relative_to(ROOT):
                problems.append(f"{where}: leaves the repository")
                continue
            if anchor:
                if dest.suffix != ".md":
                    problems.append(f"{where}: an anchor into a file that is not Markdown")
                    continue
                table = anchors(dest)
                if anchor not in table:
                    problems.append(f"{where}: no heading with anchor #{anchor} in "
                                    f"{dest.relative_to(ROOT)}")
                elif table[anchor] != anchor:
                    problems.append(f"{where}: the heading's anchor is #{anchor} in mkdocs but "
                                    f"#{table[anchor]} on GitHub; reword the heading")
    return problems


def main():
    files = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))
    problems, links = [], 0
    for f in files:
        problems += check(f)
        links += sum(len(LINK.findall(re.sub(r"`[^`]*`", "", line))) for _, line in prose_lines(f))
    for p in problems:
        print(p)
    print(f"{len(files)} files, {links} links, {len(problems)} broken")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
