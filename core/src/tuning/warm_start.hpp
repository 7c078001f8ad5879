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

inline constexpr std::size_t kWarmStartPoints = 8;
inline constexpr std::size_t kPerOtherDevice = 2;

std::vector<Config> warm_start_points(TuningStore* store, const StoreKey& key);

}  // namespace tune::detail
