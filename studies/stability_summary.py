#!/usr/bin/env python3
"""Summary of `tune-lab stability --quality --json` runs (issue 15), e.g. studies/run_h200.sh stability.

  python3 studies/stability_summary.py matmul_f16.log [matmul_wgmma_f16.log ...]

Each file holds the JSON between its first '{' and last '}' (the run's log: text around it,
such as with-clocks.sh's summary, is skipped; a file without JSON is reported and skipped).
NaN (a failed timing: null in the JSON) and empty lists print as '-'. Prints, per key:
  picks: wrong picks (> 2% slower than the fastest) by the reference timed before the runs,
    by the end-of-key judge and by the judge right after each run (with how many of those are
    shown at 95%), the worst ratios, and the tuning cost (median tune_ms, sustained turns,
    pairs run: how many runs stopped after 2, 3).
  tuner vs judge: for each pair of contenders a, b that both the tuner's sustained turns and
    the judge right after the run timed, a's level over b's by each path (the mean over the
    rounds of the per-round ratio, as the tuner decides), medians over the runs, and the
    median of the per-run differences: a systematic difference between the two timing paths
    shows here.
Then, over all keys, the places table: for the rounds in which every contender ran, each
turn's median over its contender's mean over those rounds, by pair and by its slot in the
pair's timeline (t0..t{n-1} the forward round, t{n}..t{2n-1} the backward one: slot t{n+i}
holds the contender of forward place n-1-i), each row divided by its own mean (so a drift
between pairs does not read as a place effect; the row's level is printed after it), median
over the runs with the same number of contenders: a bias tied to a slot (a clock dip in step
with the pairs, H200 2026-12-03 at 7053a08 and 71dd9f9) shows as a column away from 1.
"""
import json
import math
import statistics as st
import sys
from collections import defaultdict


def load(path):
    text = open(path).read()
    if "{" not in text or "}" not in text:
        raise ValueError("no JSON object in it")
    return json.loads(text[text.index("{"):text.rindex("}") + 1])


def finite(values):
    """The values that are numbers and finite (JSON null, NaN and inf left out)."""
    return [v for v in values or [] if isinstance(v, (int, float)) and math.isfinite(v)]


def fmt(value, spec=".3f"):
    return "-" if value is None else format(value, spec)


def worst(values):
    v = finite(values)
    return max(v) if v else None


def median(values):
    v = finite(values)
    return st.median(v) if v else None


def short(name):
    """A configuration's name without what every one of a kernel's names repeats."""
    return name.replace(",shared_bytes=", ";smem=")


def turn_medians(order, medians):
    """[(round, place, name, median)] for every turn of one run, in the order they ran."""
    seen = defaultdict(int)
    out = []
    for r, names in enumerate(order):
        for place, name in enumerate(names):
            i = seen[name]
            seen[name] += 1
            values = medians.get(name) or []
            if i < len(values) and finite([values[i]]):
                out.append((r, place, name, values[i]))
    return out


def round_ratio(a, b):
    """a's level over b's: the mean over the rounds both timed of a's round over b's."""
    ratios = [x / y for x, y in zip(a or [], b or []) if len(finite([x, y])) == 2 and y > 0]
    return st.mean(ratios) if ratios else None


def picks_line(key):
    judge, each = key.get("judge", {}), key.get("judge_each", {})
    pairs = [len(o) // 2 for o in key.get("sustained_order", [])]
    runs = len(key.get("picks", []))
    count = lambda d, name: fmt(d.get(name), "d")  # noqa: E731 ('-' when absent)
    return (f"  reference: {count(key, 'wrong_picks')} of {runs} wrong (worst "
            f"{fmt(worst(key.get('pick_ratios')))}); end judge: {count(judge, 'wrong_picks')} of "
            f"{runs} wrong (worst {fmt(worst(judge.get('pick_ratios')))}); right after each "
            f"run: {count(each, 'wrong_picks')} wrong, {count(each, 'shown_wrong')} shown (worst "
            f"{fmt(worst(each.get('pick_ratios')))})\n"
            f"  cost: tune_ms median {fmt(median(key.get('tune_ms')), '.0f')} (min "
            f"{fmt(min(finite(key.get('tune_ms'))) if finite(key.get('tune_ms')) else None, '.0f')}, max "
            f"{fmt(worst(key.get('tune_ms')), '.0f')}); sustained turns median "
            f"{fmt(median(key.get('sustained_turns')), '.0f')}; pairs run "
            + (", ".join(f"{p}: {pairs.count(p)}" for p in sorted(set(pairs))) or "-"))


def tuner_vs_judge(key):
    """{(a, b): [(tuner ratio, judge ratio)]} over the runs in which both paths timed a and b."""
    out = defaultdict(list)
    rounds = key.get("judge_each", {}).get("rounds_ns", [])
    for medians, judged in zip(key.get("sustained_medians_ns", []), rounds):
        names = sorted(n for n in medians if n in judged)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                t = round_ratio(medians[a], medians[b])
                j = round_ratio(judged[a], judged[b])
                if t is not None and j is not None:
                    out[(a, b)].append((t, j))
    return out


def places(keys):
    """{n: {(pair, slot): [ratio]}} over all runs of all keys: the rounds everyone ran."""
    table = defaultdict(lambda: defaultdict(list))
    for key in keys:
        for order, medians in zip(key.get("sustained_order", []),
                                  key.get("sustained_medians_ns", [])):
            if not order:
                continue
            n = len(order[0])
            full = [(r, place, name, m) for r, place, name, m in turn_medians(order, medians)
                    if len(order[r]) == n]
            by_name = defaultdict(list)
            for _, _, name, m in full:
                by_name[name].append(m)
            for r, place, name, m in full:
                table[n][(r // 2, place + (n if r % 2 else 0))].append(m / st.mean(by_name[name]))
    return table


def print_key(key):
    print(f"{key.get('kernel')} {key.get('size')}")
    print(picks_line(key))
    for (a, b), runs in sorted(tuner_vs_judge(key).items()):
        if len(runs) >= 3:
            t, j = zip(*runs)
            print(f"    {short(a)} / {short(b)}: tuner {st.median(t):.3f}, judge "
                  f"{st.median(j):.3f}, difference {st.median(x - y for x, y in runs):+.3f} "
                  f"({len(runs)} runs)")


def print_places(table):
    for n, cells in sorted(table.items()):
        print(f"\nplaces, {n} contenders (turn median / its contender's mean, divided by the "
              f"row's mean; median over runs)")
        print("pair " + " ".join(f"t{i:<5}" for i in range(2 * n)) + " level  runs")
        for p in sorted({p for p, _ in cells}):
            row = [st.median(cells[(p, i)]) if cells.get((p, i)) else None for i in range(2 * n)]
            level = st.mean(finite(row)) if finite(row) else None
            print(f"{p:<4} " + " ".join(fmt(c / level if c and level else None).ljust(6)
                                        for c in row)
                  + f" {fmt(level)}  {max(len(cells.get((p, i), [])) for i in range(2 * n))}")


def main(paths):
    keys = []
    for path in paths:
        try:
            doc = load(path)
        except (OSError, ValueError) as e:
            print(f"# {path}: skipped ({e})")
            continue
        print(f"# {path}: {doc.get('device')}, seed {doc.get('seed')}, {doc.get('runs')} runs")
        for key in doc.get("keys", []):
            keys.append(key)
            print_key(key)
    print_places(places(keys))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
