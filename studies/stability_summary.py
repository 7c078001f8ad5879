#!/usr/bin/env python3
"""Summary of `tune stability --quality --json` runs (issue 15), e.g. studies/run_h200.sh s25.

  python3 studies/stability_summary.py matmul_f16.log [matmul_wgmma_f16.log ...]

Each file holds the JSON between its first '{' and last '}' (the run's log: text around it,
such as with-clocks.sh's summary, is skipped). Prints, per key:
  picks: wrong picks (> 2% slower than the fastest) by the end-of-key judge and by the judge
    right after each run (with how many of those are shown at 95%), the worst ratios, and the
    tuning cost (median tune_ms, sustained turns, pairs run: how many runs stopped after 2, 3).
  tuner vs judge: for each pair of contenders both the tuner's sustained turns and the
    judge right after the run timed, the ratio of their levels by each path (median over the
    runs): a systematic difference between the two timing paths shows here.
Then, over all keys, the places table: each sustained turn's median over its contender's mean
in that run, by pair and by its place in the pair's timeline (forward places 0..n-1, then the
backward round's), median over the runs with the same number of contenders: a bias tied to a
place (a clock dip in step with the pairs, sessions 17-18) shows as a column away from 1.
"""
import json
import statistics as st
import sys
from collections import defaultdict


def load(path):
    text = open(path).read()
    return json.loads(text[text.index("{"):text.rindex("}") + 1])


def short(name):
    """A configuration's name without its launch part (block, shared bytes)."""
    return name.split(";")[0] + ("/s" + name.split("num_stages=")[1].split(",")[0]
                                 if "num_stages=" in name else "")


def turn_medians(order, medians):
    """[(round, place, name, median)] for every turn of one run, in the order they ran."""
    seen = defaultdict(int)
    out = []
    for r, names in enumerate(order):
        for place, name in enumerate(names):
            i = seen[name]
            seen[name] += 1
            if i < len(medians.get(name, [])):
                out.append((r, place, name, medians[name][i]))
    return out


def tuner_ratio(med_a, med_b):
    """a's level over b's from their sustained turn medians, over the rounds both ran."""
    n = min(len(med_a), len(med_b))
    if n == 0:
        return None
    return st.mean(med_a[r] / med_b[r] for r in range(n))


def picks_line(key):
    judge, each = key.get("judge", {}), key.get("judge_each", {})
    pairs = [len(o) // 2 for o in key.get("sustained_order", [])]
    worst = max(judge.get("pick_ratios", [float("nan")]))
    worst_each = max(each.get("pick_ratios", [float("nan")]))
    return (f"  end judge: {judge.get('wrong_picks')} of {len(key['picks'])} wrong (worst "
            f"{worst:.3f}); right after each run: {each.get('wrong_picks')} wrong, "
            f"{each.get('shown_wrong')} shown (worst {worst_each:.3f})\n"
            f"  cost: tune_ms median {st.median(key['tune_ms']):.0f} (min "
            f"{min(key['tune_ms']):.0f}, max {max(key['tune_ms']):.0f}); sustained turns median "
            f"{st.median(key['sustained_turns']):.0f}; pairs run "
            + ", ".join(f"{p}: {pairs.count(p)}" for p in sorted(set(pairs))))


def tuner_vs_judge(key):
    """{(a, b): (tuner ratios, judge ratios)} over the runs both timed a and b."""
    out = defaultdict(lambda: ([], []))
    rounds = key.get("judge_each", {}).get("rounds_ns", [])
    for run, medians in enumerate(key.get("sustained_medians_ns", [])):
        if run >= len(rounds):
            break
        judged = rounds[run]
        names = sorted(n for n in medians if n in judged and judged[n] and medians[n])
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                t = tuner_ratio(medians[a], medians[b])
                j = st.mean(judged[a]) / st.mean(judged[b])
                if t is not None:
                    out[(a, b)][0].append(t)
                    out[(a, b)][1].append(j)
    return out


def places(keys):
    """{n: {(pair, timeline place): [ratio]}} over all runs of all keys."""
    table = defaultdict(lambda: defaultdict(list))
    for key in keys:
        for order, medians in zip(key.get("sustained_order", []),
                                  key.get("sustained_medians_ns", [])):
            if not order:
                continue
            mean = {name: st.mean(m) for name, m in medians.items() if m}
            n = len(order[0])
            for r, place, name, median in turn_medians(order, medians):
                timeline = place if r % 2 == 0 else len(order[r]) + place
                if len(order[r]) == n:  # places of rounds with everyone running
                    table[n][(r // 2, timeline)].append(median / mean[name])
    return table


def main(paths):
    keys = []
    for path in paths:
        doc = load(path)
        print(f"# {path}: {doc.get('device')}, seed {doc.get('seed')}, {doc.get('runs')} runs")
        for key in doc["keys"]:
            keys.append(key)
            print(f"{key['kernel']} {key['size']}")
            print(picks_line(key))
            for (a, b), (t, j) in sorted(tuner_vs_judge(key).items()):
                if len(t) >= 3:
                    print(f"    {short(a)} / {short(b)}: tuner {st.median(t):.3f}, judge "
                          f"{st.median(j):.3f}, difference {st.median(t) - st.median(j):+.3f}"
                          f" ({len(t)} runs)")
    for n, cells in sorted(places(keys).items()):
        pairs = sorted({p for p, _ in cells})
        print(f"\nplaces, {n} contenders (turn median / its contender's mean; median over runs)")
        print("pair " + " ".join(f"{'f' if i < n else 'b'}{i % n:<5}" for i in range(2 * n)))
        for p in pairs:
            row = [cells.get((p, i), []) for i in range(2 * n)]
            print(f"{p:<4} " + " ".join(f"{st.median(c):.3f} " if c else "  -    " for c in row)
                  + f"  ({len(row[0])} runs)")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
