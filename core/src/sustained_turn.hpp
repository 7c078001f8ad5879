// Sustained turns: one kernel launched back to back for a while, of which only the second half
// counts. On a power-limited GPU the clock follows the power drawn over the last tens of
// milliseconds, so a kernel timed right after another runs partly at the clock its
// predecessor left; after a turn of about twice DeviceInfo::power_settle_ms the clock has
// followed this kernel's own draw, and its second half is what a program running it back to
// back sees (issue 15; bench/RESULTS.md, `tune-lab turns`). The showdown's sustained turns
// (TimingPolicy::showdown_sustain_ms) and `tune stability --quality`'s reference both time
// turns through these two functions, so they measure the same thing. Pure; thread-safe.
// Internal (not installed): the library, tests and studies include it.
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
// in pairs: pair p's backward round (2p+1) is its forward round (2p) reversed, so a clock that
// drifts linearly over the pair moves every contender's two turns by the same total. The
// forward orders are one permutation drawn from `seed`, turned each pair: contender base[i]
// runs (i - c_p) mod n-th, with turns c_0 = 0, c_1, ..., c_{n-1} all distinct (then again from
// c_0). So any n pairs in a row put every contender in every place once (a Latin square), and
// the contender at a pair's turning point (last forward, first backward: two turns in a row)
// is never the last pair's. Consecutive turns differ by about n/2, so a dip that falls on the
// places around one pair's turning point falls on other contenders in the next: for odd
// n = 2m + 1 a constant step m (every contender moves by m or m + 1 places from each pair to
// the next); for even n = 2m the turns 0, m, 1, m + 1, ..., m - 1, 2m - 1 (by m places from
// an even pair to the next, from pair 0 to pair 1 among them, the two every decision takes;
// by m - 1 or m + 1 from an odd one, for n = 4 by 1 or 3; by one place at the wrap from pair
// n - 1 to pair n): for n = 4 and 6 no constant step near n/2 is prime to n.
// A fixed order (0..n-1, then back) leaves a contender in the same place in every pair, and a
// power-limited GPU's clock does not only drift: on the H200 it dips by 10-14% for about
// 0.3 s some 0.3-0.6 s into the sustained turns and again about 0.9 s later, in step with a
// pair of five contenders, so the contender at the turning point was timed 3-13% slower than
// it is in every pair (H200, 2026-12-03, 7053a08, 71dd9f9). With the places going round, such a dip
// falls on different contenders in different pairs: it shows as the pairs' spread (pair_medians)
// instead of a bias they repeat, and over n pairs it falls on every contender alike. Deterministic
// for given arguments; empty for n = 0; a negative round counts as 0.
std::vector<std::size_t> turn_order(std::size_t n, int round, std::uint64_t seed);

// Pair `pair`'s forward order over the contenders `among` (their indices; those still
// running): turn_order over them, mapped to their indices, and turned by one place (its last
// first) when it would end on `previous`, the contender that ended the last pair's forward
// round: once some contenders have stopped, turn_order over the smaller set alone could give
// the turning point to the same one twice in a row. The pair's backward round runs it
// reversed. `previous` outside `among` (e.g. SIZE_MAX for the first pair): no turn.
std::vector<std::size_t> forward_order(const std::vector<std::size_t>& among, int pair,
                                       std::uint64_t seed, std::size_t previous);

// A seed for turn_order from std::random_device; never 0 (TimingPolicy::showdown_seed's "draw
// one").
std::uint64_t fresh_seed();

// Per pair of rounds, each contender's mean of its forward and backward turn medians: the unit
// the decisions below take, since two turns of one pair are not independent of each other (the
// contender whose forward turn is last takes the backward round's first: whatever slows the
// GPU then hits both). `medians[k][r]` as below; an unpaired last round is left out (so a
// contender with one round has none); NaN stays NaN.
std::vector<std::vector<double>> pair_medians(const std::vector<std::vector<double>>& medians);

// The functions below take `medians[k][r]`, contender k's value in unit r: the showdown gives
// them pair means (pair_medians), so a unit is a pair of rounds; any equally spaced units do.
// The standard error of a contender's mean gap below comes from the gaps' variance pooled over
// all contenders but the reference (few units each), with (k-1)(n-1) degrees of freedom for k
// contenders of n units; the margins it sets use Student's t quantile at those degrees of
// freedom (student_t_quantile, stats.hpp) for the one-sided `confidence`, not the normal
// one: after two units of two contenders (one degree of freedom) the 95% margin is 6.3
// standard errors, not 1.6, so two units that happen to agree decide nothing alone. The
// gaps of different contenders share the reference's noise round by round, so with many
// contenders the pooled degrees of freedom overstate the independent information somewhat.
// A `confidence` outside (0, 1) decides nothing and rules nobody out.

// The live contender with the lowest mean among those with the most units (medians.size()
// when none is live). `medians[k][r]` is contender k's value in unit r (a contender with no
// values or any NaN was dropped and takes no part; a contender with fewer units than others
// was left out of the later ones, `ruled_out`).
std::size_t sustained_leader(const std::vector<std::vector<double>>& medians);

// Whether the rounds so far have decided `pick` well enough to stop: for every other live
// contender k, its gaps g_r = medians[k][r] / medians[pick][r] - 1 over the rounds both ran
// satisfy mean(g) - t * se >= -tolerance: nobody is likely to be more than `tolerance` faster
// than the pick. The pick is the one the winner rule would choose, which need not be the
// leader (a near-tie within the rule's band goes to the first in canonical order): deciding
// on the leader alone would let the band add its width to the timing's error. A quiet device
// decides after two units (pairs); a GPU whose clock moves by more than the contenders
// differ needs more. With fewer than two live contenders, true; with no spare degree of
// freedom (one unit each), false; a pick that is not live: true only when none is.
bool pick_decided(const std::vector<std::vector<double>>& medians, std::size_t pick,
                  double tolerance, double confidence);

// pick_decided for the leader (sustained_leader).
bool leader_decided(const std::vector<std::vector<double>>& medians, double tolerance,
                    double confidence);

// Which contenders the rounds so far put clearly behind the leader (as in pick_decided, with
// the leader as the pick): mean(g) - t * se > 0, likely slower than the leader. Such a
// contender cannot be faster than the leader, so its turns can stop while the others go on
// (the cost of sustained turns is two turns per contender per pair). The leader, dropped
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
