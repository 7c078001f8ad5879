// Warm start: what the store already knows of a kernel on a device, as points a search on a
// new key evaluates early. A prior only: each point is timed again here like any other, and
// counts against the search's budget.
//
// The points are, in this order, at most kWarmStartPoints in all: the winners of the same
// kernel's other keys on the same device (by the one winner rule, among their ok rows), newest
// key first; then the best kPerOtherDevice configurations of the same key on each other device
// (its ranking by the same rule), newest device first: a configuration that won elsewhere is
// a better first guess than a random one, and is timed here like any other. Read through
// TuningStore::find_rows, so every layer answers (the user's file, bundles, the shared tier's
// local file); a store that cannot list keys or cannot be read gives none (the search runs
// cold). Internal to the core.
#pragma once

#include <cstddef>
#include <vector>

#include "tune/config.hpp"
#include "tune/store.hpp"

namespace tune::detail {

// Measured on the benchmark hub's spaces, each GPU's search started from the five others'
// rankings (studies/history/results-2026-12-07.md): 4 of each device and 16 in all reach 2% of
// the optimum in 7-14 evaluations on the spaces whose family member's optimum ranks 3rd or 4th
// there (2 and 8: 101-113), at 10-16 more evaluations (one per point) where no ranking carries
// over. The search caps them further at a quarter of its budget (effort_plan.cpp), so a quick
// search keeps most of its 30 evaluations for its own proposals.
inline constexpr std::size_t kWarmStartPoints = 16;
inline constexpr std::size_t kPerOtherDevice = 4;

std::vector<Config> warm_start_points(TuningStore* store, const StoreKey& key);

}  // namespace tune::detail
