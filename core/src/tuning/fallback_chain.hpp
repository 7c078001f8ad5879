// The device-family fallback chain (tune/fallback.hpp): the decisions of other devices read
// from the store's layers, graded by device family (cache/device_family.hpp), and the serving
// of a key from the first level that works here. Internal to the core.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "call_keys.hpp"
#include "session.hpp"
#include "tune/fallback.hpp"

namespace tune::detail {

// Serves `forms.key` from the chain: each of fallback_candidates() in order, then `nearest` (the
// nearest key's decision published on this device, if any), then the first candidate. A pick serves
// when it is a point of this key's space (`keys`), compiles here and passes the output check
// here (Autotuner::measure's rules: launched on the call's arguments, verified when the kernel
// checks outputs); a pick that fails is recorded in `report` and the next is tried. With
// `isolated` (IsolationOptions::enabled) only `nearest` may serve: nothing untried runs in the
// application's context. Fills `report` (ResultSource::fallback, TuningReport::fallback, the
// picks tried in `results`). failed_precondition naming every level's failure when none
// serves.
Result<Selection> serve_from_chain(const SessionContext& ctx, const CallKeys& keys, Device& dev,
                                   ArgList args, const KeyForms& forms,
                                   const std::optional<Selection>& nearest, bool isolated,
                                   TuningReport& report);

}  // namespace tune::detail
