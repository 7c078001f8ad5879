// The one rule that decides a key's winner from its results, so that every process (and every
// rank of a job) that holds the same rows picks the same configuration, whatever order they
// were timed or loaded in and whatever noise separated near-ties.
//
// The rule: among the configurations that succeeded with a finite median, those whose median
// is within TimingPolicy::tie_tolerance of the fastest (median <= fastest * (1 + tolerance))
// are equivalent; of these the one first in canonical order, Config::to_string compared
// lexicographically (bytewise), wins. The rest follow, fastest first (ties again in canonical
// order): the order the winner stage falls back in when a winner no longer compiles.
// A stored winner is never stored as such: it is recomputed by this rule from the stored rows,
// so loading the same rows gives the same winner. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "tune/autotuner.hpp"

namespace tune::detail {

// One result as the rule sees it, whatever holds it (a ConfigResult of a tuning, a row of a
// store): its configuration's canonical text (Config::to_string), its median, whether it
// succeeded. Borrows the text: it lives as long as what it was taken from.
struct RuledResult {
  std::string_view config;
  double median = 0;
  bool ok = false;
};

// Indices into `results` of the entries that are ok with a finite median, in the order
// described above (the winner first). `tolerance` < 0 counts as 0.
std::vector<std::size_t> rank_by_winner_rule(std::span<const RuledResult> results,
                                             double tolerance);

// The same rule on a tuning's results: indices into `results`.
std::vector<std::size_t> rank_by_winner_rule(const std::vector<ConfigResult>& results,
                                             double tolerance);

}  // namespace tune::detail
