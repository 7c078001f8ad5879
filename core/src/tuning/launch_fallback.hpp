// A cached winner that fails to launch for a new member of its bucket (a size it was never
// launched at): the call falls back to the key's next stored candidate, in the winner rule's
// order (winner_rule.hpp), instead of failing. These are the stages' pure parts; the
// Autotuner compiles and launches. Internal to the core.
#pragma once

#include <string>
#include <vector>

#include "tune/autotuner.hpp"

namespace tune::detail {

// Whether a launch's failure is one a different configuration may not meet (the driver
// refused the launch, a device limit, a refused grid): launch_failed, out_of_resources,
// invalid_argument. A lost device, a throwing callback or a timeout end the call.
bool may_fall_back(const Status& launch) noexcept;

// The configurations of `report` that may stand in for `failed`: those that succeeded with
// a finite median, in the winner rule's order at `tie_tolerance`, less `failed`.
std::vector<Config> fallback_order(const TuningReport& report, const Config& failed,
                                   double tie_tolerance);

// The event's text, as TuningReport::launch_fallbacks and the log warning say it:
// "{BM=64} failed at n=7000 (launch_failed: ...); {BM=32} launched instead".
std::string fallback_event(const Config& failed, const std::string& member, const Status& why,
                           const Config& used);

}  // namespace tune::detail
