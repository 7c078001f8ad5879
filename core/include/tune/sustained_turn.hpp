// Sustained turns: one kernel launched back to back for a while, of which only the second half
// counts. On a power-limited GPU the clock follows the power drawn over the last tens of
// milliseconds, so a kernel timed right after another runs partly at the clock its
// predecessor left; after a turn of about twice DeviceInfo::power_settle_ms the clock has
// followed this kernel's own draw, and its second half is what a program running it back to
// back sees (issue 15; bench/RESULTS.md, `bench_cuda --turns`). The showdown's sustained turns
// (BenchOptions::showdown_sustain_ms) and `tune stability --quality`'s reference both time
// turns through these two functions, so they measure the same thing. Pure; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tune {

// Launches in one turn of `turn_ms` for a kernel taking about `per_launch_ns` per launch: at
// least 2 (one for each half: a kernel longer than half the turn is its own sustained load)
// and at most max(2, max_reps). A non-positive or non-finite per_launch_ns counts as 1 ns.
int sustained_turn_reps(double turn_ms, double per_launch_ns, int max_reps);

// The samples of a turn's second half (the later size - size / 2 of them, in order).
std::vector<double> second_half(std::span<const double> turn);

// One contender's turns (each already cut to its second half) as one sample set whose median is
// the mean of the turns' medians: each turn's samples are scaled so that its median becomes
// that mean. Turns taken forward and backward put a clock that drifts through the rounds
// (heat, a power limit) above one turn's level and below the other's by the same amount; the
// mean of their medians cancels that, where the median of the pooled samples lies anywhere
// between the two levels, wherever the samples' spreads put it. Empty turns are skipped.
std::vector<double> level_turns(const std::vector<std::vector<double>>& turns);

// The order of round `round`'s turns over `n` contenders (a permutation of 0..n-1). Rounds come
// in pairs: pair p's forward round (round 2p) is a permutation drawn from `seed` and p, its
// backward round (2p+1) the same reversed, so a clock that drifts linearly over the pair moves
// every contender's two turns by the same total. A fixed order (0..n-1, then back) leaves a
// contender in the same place in every pair, and a power-limited GPU's clock does not only
// drift: on the H200 it swings by about 5% with a period near a second, in step with the
// onset of sustained load, so the contender whose turns sit at the same moment of every pair
// (the last one forward, the first one backward: two turns in a row) was timed 3-13% slower
// than it is (bench/RESULTS.md, session 18). Drawn afresh for every pair, the place each
// contender takes is random, and such a swing becomes noise that the rounds' spread shows
// (pair_medians) instead of a bias that they repeat. Deterministic for given arguments
// (Fisher-Yates on std::mt19937_64); empty for n = 0; a negative round counts as 0.
std::vector<std::size_t> turn_order(std::size_t n, int round, std::uint64_t seed);

// Per pair of rounds, each contender's mean of its forward and backward turn medians: the unit
// the decisions below take, since two turns of one pair are not independent of each other (the
// contender whose forward turn is last takes the backward round's first: whatever slows the
// GPU then hits both). `medians[k][r]` as below; an unpaired last round is left out (so a
// contender with one round has none); NaN stays NaN.
std::vector<std::vector<double>> pair_medians(const std::vector<std::vector<double>>& medians);

// The standard error of a contender's mean gap below comes from the gaps' variance pooled over
// all contenders but the reference (few rounds each), with (k-1)(n-1) degrees of freedom for k
// contenders of n rounds; the margins it sets use Student's t quantile at those degrees of
// freedom (student_t_quantile, tune/stats.hpp) for the one-sided `confidence`, not the normal
// one: after one pair of rounds of two contenders (one degree of freedom) the 95% margin is
// 6.3 standard errors, not 1.6, so two rounds that happen to agree decide nothing alone. The
// gaps of different contenders share the reference's noise round by round, so with many
// contenders the pooled degrees of freedom overstate the independent information somewhat.
// A `confidence` outside (0, 1) decides nothing and rules nobody out.

// The live contender with the lowest mean among those with the most rounds (medians.size()
// when none is live). `medians[k][r]` is contender k's turn median in round r (NaN where it
// has none: a contender with any NaN was dropped and takes no part; a contender with fewer
// rounds than others was left out of the later ones, `ruled_out`).
std::size_t sustained_leader(const std::vector<std::vector<double>>& medians);

// Whether the rounds so far have decided `pick` well enough to stop: for every other live
// contender k, its gaps g_r = medians[k][r] / medians[pick][r] - 1 over the rounds both ran
// satisfy mean(g) - t * se >= -tolerance: nobody is likely to be more than `tolerance` faster
// than the pick. The pick is the one the winner rule would choose, which need not be the
// leader (a near-tie within the rule's band goes to the first in canonical order): deciding
// on the leader alone would let the band add its width to the timing's error. A quiet device
// decides after one pair of rounds; a GPU whose clock moves by more than the contenders
// differ needs more. With fewer than two live contenders, true; with no spare degree of
// freedom (one round each), false; a pick that is not live: true only when none is.
bool pick_decided(const std::vector<std::vector<double>>& medians, std::size_t pick,
                  double tolerance, double confidence);

// pick_decided for the leader (sustained_leader).
bool leader_decided(const std::vector<std::vector<double>>& medians, double tolerance,
                    double confidence);

// Which contenders the rounds so far put clearly behind the leader (as in pick_decided, with
// the leader as the pick): mean(g) - t * se > 0, likely slower than the leader. Such a
// contender cannot be faster than the leader, so its turns can stop while the others go on
// (the cost of sustained turns is one turn per contender per round). The leader, dropped
// contenders, and every contender when there is no spread to judge the noise by: false.
std::vector<bool> ruled_out(const std::vector<std::vector<double>>& medians, double confidence);

// Each live contender's level from its turn medians, comparable across contenders that ran
// different rounds: the leader's (as in leader_decided) is the mean of its medians; every
// other's is that times the mean of its per-round ratios to the leader over the rounds both
// ran. A contender ruled out after the first rounds is thus measured against the leader at the
// clock of those rounds, not against the leader's later rounds at whatever clock the GPU had
// moved to. NaN for a dropped contender (and for all when none is live).
std::vector<double> turn_levels(const std::vector<std::vector<double>>& medians);

}  // namespace tune
