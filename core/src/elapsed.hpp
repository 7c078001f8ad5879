// Wall time since a point, in milliseconds: how the core measures its own stages; and the
// infinite time that stands for "not measured" or "failed" wherever times are compared.
#pragma once

#include <chrono>
#include <limits>

namespace tune::detail {

using Clock = std::chrono::steady_clock;

inline constexpr double kInf = std::numeric_limits<double>::infinity();

inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace tune::detail
