// The checks Autotuner::make makes of its options: options that make no sense, named.
#pragma once

#include "tune/autotuner.hpp"

namespace tune::detail {

// Options that make no sense, named; Autotuner::make refuses them.
Status validate_options(const KernelDef& def, const AutotunerOptions& opts);

}  // namespace tune::detail
