#!/usr/bin/env python3
"""Summary of `tuning_study slots`'s slots.json (issue 15): does a turn's place bias its time?

  python3 studies/slots_summary.py slots.json

profile: each repetition's consecutive turns of one kernel, each turn's second-half median over
the repetition's median (the clock's course over a pair's length).
null / real: per design, each contender's level over the first contender's (the null
contenders are one kernel: anything but 1.000 is the schedule's doing), as a mean over the
repetitions with the worst repetition beside it.
"""
import json
import statistics as st
import sys


def level_ratios(design, rec):
    """Each contender's level over contender 0's (by the design's own rule), by name."""
    if design == "showdown":
        med = rec["medians_ns"]
        order = rec["order"]
        if not order:  # no sustained turns were held
            return {}, []
        if isinstance(order[0], list):  # one order per round (71dd9f9 on): the first
            order = order[0]               # round's, contender 0 the first to run
        base = med[order[0]]
        out = {}
        for name in order:
            m = med[name]
            n = min(len(m), len(base))
            out[name] = st.mean(m[r] / base[r] for r in range(n)) if n else float("nan")
        return out, order
    names = rec["names"]
    turns = rec["turns"]
    if design == "bracket":
        ratios = {k: [] for k in range(len(names))}
        ratios[0] = [1.0]
        for i, t in enumerate(turns):
            if t["k"] == 0:
                continue
            around = [turns[j]["median_ns"] for j in (i - 1, i + 1)
                      if 0 <= j < len(turns) and turns[j]["k"] == 0]
            ratios[t["k"]].append(t["median_ns"] / st.mean(around))
        return {names[k]: st.mean(v) for k, v in ratios.items()}, names
    per = {k: [] for k in range(len(names))}
    for t in turns:
        per[t["k"]].append(t["median_ns"])
    base = st.mean(per[0])
    return {names[k]: st.mean(v) / base for k, v in per.items()}, names


def position_profile(design, reps):
    """pairs/shuffle/bracket: each schedule position's turn over the repetition's mean turn."""
    cols = []
    for rep in reps:
        turns = rep[design]["turns"]
        mean = st.mean(t["median_ns"] for t in turns)
        cols.append([t["median_ns"] / mean for t in turns])
    n = min(len(c) for c in cols)
    return [st.mean(c[i] for c in cols) for i in range(n)]


def short(name):
    if not name.startswith("BK="):
        return name
    kv = dict(p.split("=") for p in name.replace(";", ",").split(",") if "=" in p)
    return "%s/%s/%s s%s" % (kv.get("BM"), kv.get("BN"), kv.get("BK"), kv.get("num_stages"))


def main(path):
    text = open(path).read()
    d = json.loads(text[text.index("{"):text.rindex("}") + 1])
    print("# %s %s, turns of %.0f ms" % (d["kernel"], d["size"], d["turn_ms"]))
    print("\n## profile: consecutive turns of one kernel, second-half median / repetition median")
    for i, rep in enumerate(d["profile"]):
        meds = [st.median(t[len(t) // 2:]) for t in rep]
        m = st.median(meds)
        print("rep %d: %s" % (i, " ".join("%.3f" % (x / m) for x in meds)))
        first = rep[0]
        tenth = max(1, len(first) // 10)
        chunks = [st.median(first[j:j + tenth]) / m for j in range(0, len(first), tenth)]
        print("       first turn by tenths: %s" % " ".join("%.3f" % c for c in chunks))
    for group in ("null", "real"):
        reps = d.get(group, [])
        if not reps:
            continue
        print("\n## %s: level / first contender's (mean over %d repetitions; worst)" %
              (group, len(reps)))
        for design in reps[0].keys():
            per = {}
            order = None
            for rep in reps:
                ratios, names = level_ratios(design, rep[design])
                order = order or names
                for name, r in ratios.items():
                    per.setdefault(name, []).append(r)
            # In the showdown the order is the showdown's, which may differ per repetition.
            line = []
            for name in sorted(per, key=lambda n: st.mean(per[n])):
                v = per[name]
                worst = max(v, key=lambda x: abs(x - 1))
                line.append("%s %.3f (%.3f)" % (short(name), st.mean(v), worst))
            print("%-9s %s" % (design, " | ".join(line)))
            if design == "showdown" and any(
                    isinstance(rep[design]["order"][0], list) for rep in reps
                    if rep[design]["order"]):
                print("          by slot: (orders change from pair to pair: see each round's)")
            elif design == "showdown":
                slot = {}
                for rep in reps:
                    ratios, names = level_ratios(design, rep[design])
                    for i, name in enumerate(names):
                        slot.setdefault(i, []).append(ratios[name])
                print("          by slot: %s" %
                      " ".join("%d:%.3f" % (i, st.mean(v)) for i, v in sorted(slot.items())))
            else:
                prof = position_profile(design, reps)
                print("          by position: %s" % " ".join("%.3f" % x for x in prof))


if __name__ == "__main__":
    main(sys.argv[1])
