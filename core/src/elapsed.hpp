// Wall time since a point, in milliseconds: how the core measures its own stages.
#pragma once

#include <chrono>

namespace tune::detail {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace tune::detail
