// The timing policy that internal code runs on (race.hpp, showdown.hpp, the sessions).
#pragma once

#include "tune/benchmark.hpp"

namespace tune {

using TimingPolicy = BenchOptions;

}  // namespace tune
