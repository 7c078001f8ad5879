// The one rule that decides a key's winner from its results, so that every process (and every
// rank of a job) that holds the same rows picks the same configuration, whatever order they
// were timed or loaded in and whatever noise separated near-ties.
//
// The rule: among the configurations that succeeded with a finite median, those whose median
// is within BenchOptions::race_tolerance of the fastest (median <= fastest * (1 + tolerance))
// are equivalent; of these the one first in canonical order, Config::to_string compared
// lexicographically (bytewise), wins. The rest follow, fastest first (ties again in canonical
// order): the order the winner stage falls back in when a winner no longer compiles.
// A stored winner is never stored as such: it is recomputed by this rule from the stored rows,
// so loading the same rows gives the same winner. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <vector>

#include "tune/autotuner.hpp"

namespace tune::detail {

// Indices into `results` of the configurations with a finite median and an ok status, in the
// order described above (the winner first). `tolerance` < 0 counts as 0.
std::vector<std::size_t> rank_by_winner_rule(const std::vector<ConfigResult>& results,
                                             double tolerance);

}  // namespace tune::detail
