// The finalists of a race decided in an interleaved showdown (internal: not installed).
//
// Racing times each contestant in batches as it joins, so two near-equal configurations may
// have been measured at different moments: one while the GPU sat in a lower clock or power
// state, the other after it moved. Their medians then differ by the state, not by the code
// (seen on the H200: a fresh process's fp16 samples split into two groups and the pick was 4%
// slower than the best). The showdown re-times the few contestants that can still win under
// the same conditions: rounds of one batch each, A B C then C B A, so a drift or a step of the
// clock falls on all of them alike; their decisive samples are the showdown's.
#pragma once

#include <vector>

#include "race.hpp"

namespace tune {

// Whether `first` and `second` (two halves of one contestant's samples, timed in that order)
// come from different conditions: their medians' `confidence` intervals are disjoint and the
// medians differ by more than `tolerance`. Noise-aware: a noisy device has wide intervals and
// is not called non-stationary for its noise alone. Pure; thread-safe.
bool shifted(const std::vector<double>& first, const std::vector<double>& second, double confidence,
             double tolerance);

// Runs the showdown over `entries` (a race that has ended) per opts.showdown_*:
//  0. the screen (opts.showdown_screen_*): when some contestant timed without error within
//     showdown_screen_margin of the fastest (raced out or not) would not be a finalist, all of
//     those are timed again in showdown_screen_rounds interleaved rounds (forward, backward)
//     and their samples replaced by the screen's, so that step 1 compares medians taken
//     under the same conditions rather than at whatever moment each joined the race;
//  1. the finalists are the contestants timed without error whose median is within
//     opts.showdown_margin of the fastest, raced out or not (racing compared samples that may
//     come from different clock states), the fastest opts.showdown_finalists of them;
//  2. they are timed in opts.showdown_rounds interleaved rounds of race_batch repetitions; an
//     attempt in which any finalist's samples shifted between its first and second half
//     (`shifted`) is thrown away and re-timed, at most opts.showdown_retries times (the last
//     attempt is kept and reported non-stationary);
//  3. the finalists' samples are replaced by the kept attempt's;
//  4. a contestant outside the showdown whose median is now within race_tolerance of the
//     fastest finalist (its samples were taken in other conditions, and the winner rule would
//     weigh them against the showdown's) joins the finalists and the showdown runs again;
//  5. sustained turns (opts.showdown_sustain_ms; off unless the device reports a
//     power_settle_ms): the contestants within showdown_sustain_margin of the fastest, when
//     there are two or more (up to showdown_sustain_contenders), each run alone for a turn of
//     that long, in pairs of rounds (an order drawn from opts.showdown_seed and turned each
//     pair forward, the same reversed backward: turn_order), up to
//     showdown_sustain_pairs, until the winner rule's pick is decided on the pairs' means (two
//     pairs at least: one shows no spread),
//     leaving out those clearly behind the leader (sustained_turn.hpp);
//     the second half of each turn, levelled to the contender's level against the leader
//     (turn_levels), decides their order, scaled so that the fastest keeps the fastest's
//     median from step 3 (the others' samples stay comparable).
// A contestant whose timing fails is dropped with that reason (like a race); device_lost ends
// the showdown at once. Does nothing with fewer than two finalists. Batches take `rotation`'s
// argument sets when it is active (time_reps). Blocks; not thread-safe.
Result<ShowdownReport> run_showdown(Device& dev, ArgList args, const TimingPolicy& opts,
                                    std::vector<RaceEntry>& entries,
                                    InputRotation* rotation = nullptr);

}  // namespace tune
