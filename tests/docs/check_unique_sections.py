#!/usr/bin/env python3
"""No section (a level-2 heading) twice within README.md or within bench/RESULTS.md: an edit
that pasted a block again leaves two versions of its figures. Run from the repository root."""
import collections
import sys

failed = False
for path in ("README.md", "bench/RESULTS.md"):
    with open(path, encoding="utf-8") as f:
        heads = [line.rstrip("\n") for line in f if line.startswith("## ")]
    twice = [h for h, n in collections.Counter(heads).items() if n > 1]
    if twice:
        print(f"{path}: sections twice: {', '.join(twice)}")
        failed = True
if failed:
    sys.exit(1)
print("no section twice")
