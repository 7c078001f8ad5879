// Candidates: which configurations one key considers, before anything touches a device.
//
// space -> constraints (and derive) -> heuristic values -> early_prune (checked against the
// space) -> perf model. Pure apart from the user's callbacks, each of which may throw: that is
// a callback_failed Status naming it. Internal to the core.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tune/kernel.hpp"

namespace tune::detail {

struct Candidates {
  std::vector<Config> configs;  // in space order (perf model: best estimate first)
  std::size_t pruned = 0;       // removed by early_prune and the perf model
};

// `heuristics`: this call's heuristic parameter values (empty config without heuristics).
// Errors are invalid_argument (nothing passes the constraints, early_prune returned nothing
// or something outside the space, a perf model estimate that is NaN) or callback_failed.
Result<Candidates> make_candidates(const KernelDef& def, const DeviceInfo& info, ArgList args,
                                   const Config& heuristics);

// Whether this call is an empty problem (a zero-size input): KernelDef::dims gives a grid with
// a zero dimension for every accepted point of the space (heuristic values set; at most the
// first kEmptyScan accepted points, among the first 256 * kEmptyScan, are looked at). Stops at
// the first point with a non-empty grid, so a call with work costs one dims() call. A callback
// that throws on the way (derive, a constraint, dims) is its callback_failed error, as the
// tuning would have reported it.
inline constexpr std::uint64_t kEmptyScan = 4096;
Result<bool> empty_problem(const KernelDef& def, const DeviceInfo& info, ArgList args,
                           const Config& heuristics);

// This call's heuristic parameters as a config, each heuristic run once.
Result<Config> heuristic_values(const KernelDef& def, const DeviceInfo& info, ArgList args);

}  // namespace tune::detail
