// SampleStats: what the timing of one configuration came to (the median and quantiles of its
// timed repetitions), as time_kernel, TuningReport and the stores report it.
#pragma once

#include <cstdint>
#include <string>

namespace tune {

struct SampleStats {
  std::uint32_t count = 0;
  double min = 0, p20 = 0, median = 0, p80 = 0, max = 0, mean = 0;
  // Relative spread (p80 - p20) / median: the noise band of this configuration.
  double spread() const noexcept { return median > 0 ? (p80 - p20) / median : 0.0; }
  std::string to_string() const;  // "median 12.3 us [p20 12.1, p80 12.9] n=40"
};

}  // namespace tune
