#!/usr/bin/python3
"""How well another GPU's ranking of the same space predicts this GPU's optimum.

Warm start (core/src/tuning/warm_start.hpp) seeds a search with the best configurations of
other devices. For every ordered pair of the given T4 files of one kernel, prints this GPU's
best/optimum among the other GPU's top 1, 2, 4, 8, 16 and 32, and the other GPU's rank of the
first configuration within 2% of this GPU's optimum.

Usage: transfer_ranks.py $H/convolution_milo_{A100,A4000,W6600}_T4.json.gz   (one kernel per call)
"""
import sys

import numpy as np

from needle_structure import load


def times(path):
    rows, y = load(path)
    return {tuple(sorted(r.items())): t for r, t in zip(rows, np.exp(y))}


def main(paths):
    spaces = {p.rsplit("/", 1)[-1].replace("_T4.json.gz", ""): times(p) for p in paths}
    for target, here in spaces.items():
        opt = min(here.values())
        for source, there in spaces.items():
            if source == target:
                continue
            ranked = sorted((c for c in there if c in here), key=there.get)
            tops = [min(here[c] for c in ranked[:k]) / opt for k in (1, 2, 4, 8, 16, 32)]
            first = next((i + 1 for i, c in enumerate(ranked) if here[c] <= 1.02 * opt), None)
            print(f"{target:28s} from {source:28s} top-k best/opt "
                  + " ".join(f"{t:.3f}" for t in tops) + f"; first within 2% at rank {first}")


if __name__ == "__main__":
    main(sys.argv[1:])
