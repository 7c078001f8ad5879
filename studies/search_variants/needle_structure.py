#!/usr/bin/python3
"""How much structure a model could use to find a brute-forced space's optimum.

Reads the benchmark hub's T4 files (convolution and dedispersion, each GPU) and prints, per
space: the optimum's rank under ridge regressions (lambda 1) of ln(time) fitted to the WHOLE space
(one-hot main effects of every parameter; plus the block_size_x x block_size_y pair; plus
the tile pair), the R^2 of each, and the true ratio of the point each model ranks first. A
model fitted to a hundred evaluations can only do worse than these. Then, for the convolution
on the A100, each "plane" (the tile sizes and switches) with its best block shape and the
rank of the optimum's block shape (32 x 4) in it.

Usage: needle_structure.py $H/convolution_milo_A100_T4.json.gz ...   (numpy: Debian's
python3-numpy under /usr/bin/python3)
"""
import collections
import gzip
import json
import sys

import numpy as np


def load(path):
    """The correct rows' configurations and ln(time)."""
    rows, y = [], []
    for r in json.load(gzip.open(path))["results"]:
        if r["invalidity"] != "correct":
            continue
        t = [m["value"] for m in r["measurements"] if m["name"] == "time"][0]
        rows.append(r["configuration"])
        y.append(np.log(t))
    return rows, np.array(y)


def one_hot(rows, pairs):
    """Intercept, one column per value of each varying parameter, one per value pair of `pairs`."""
    keys = [k for k in rows[0] if len({r[k] for r in rows}) > 1]
    cols = [np.ones(len(rows))]
    for k in keys:
        for v in sorted({r[k] for r in rows}):
            cols.append(np.array([r[k] == v for r in rows], float))
    for a, b in pairs:
        for va in sorted({r[a] for r in rows}):
            for vb in sorted({r[b] for r in rows}):
                cols.append(np.array([r[a] == va and r[b] == vb for r in rows], float))
    return np.column_stack(cols)


MODELS = {
    "main effects": (),
    "+ block pair": (("block_size_x", "block_size_y"),),
    "+ block and tile pairs": (("block_size_x", "block_size_y"), ("tile_size_x", "tile_size_y")),
}


def model_ranks(path):
    rows, y = load(path)
    best = int(np.argmin(y))
    name = path.rsplit("/", 1)[-1].replace("_T4.json.gz", "")
    for label, pairs in MODELS.items():
        if pairs and "block_size_x" not in rows[0]:
            continue
        a = one_hot(rows, pairs)
        w = np.linalg.solve(a.T @ a + np.eye(a.shape[1]), a.T @ y)  # ridge 1: pairs are sparse
        p = a @ w
        order = np.argsort(p)
        rank = int(np.where(order == best)[0][0]) + 1
        r2 = 1 - np.var(y - p) / np.var(y)
        first = np.exp(y[order[0]] - y[best])
        print(f"{name:32s} {label:24s} R^2 {r2:.2f}  optimum ranked {rank:5d} of {len(y)}"
              f"  model's first pick {first:.3f}x")


def planes(path):
    rows, y = load(path)
    t = np.exp(y - y.min())
    by_plane = collections.defaultdict(dict)
    for r, v in zip(rows, t):
        plane = (r["tile_size_x"], r["tile_size_y"], r["read_only"], r["use_padding"], r["use_shmem"])
        by_plane[plane][(r["block_size_x"], r["block_size_y"])] = v
    print("\nplanes (tile_x, tile_y, read_only, padding, shmem) by their best, the first 25:")
    for plane, blocks in sorted(by_plane.items(), key=lambda kv: min(kv[1].values()))[:25]:
        best = min(blocks, key=blocks.get)
        needle = blocks.get((32, 4))
        rank = sorted(blocks.values()).index(needle) + 1 if needle else None
        print(f"  {plane} best {blocks[best]:.3f}x at {best}, {len(blocks)} blocks;"
              f" 32x4 ranks {rank}")


if __name__ == "__main__":
    for f in sys.argv[1:]:
        model_ranks(f)
    for f in sys.argv[1:]:
        if "convolution_milo_A100" in f:
            planes(f)
